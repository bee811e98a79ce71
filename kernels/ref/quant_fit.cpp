// The fits the reference quantizers share (quant_fit.h): ggml's
// make_qkx2_quants / make_qkx3_quants (asymmetric), make_qx_quants with
// rmse_type 1 (symmetric) and make_qp_quants (non-negative values, used for
// the sub-block scales and mins under an importance matrix). Every float
// operation is in ggml's order: one flipped rounding changes a code.
#include "kernels/ref/quant_fit.h"

#include <cmath>

namespace kernels::ref::detail {
namespace {

void assign_offset_codes(const float* x, size_t n, float iscale, float min, int nmax, uint8_t* codes) {
  for (size_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
}

float weighted_error(const float* x, const float* weights, size_t n, const uint8_t* codes, float scale, float min,
                     FitError kind) {
  float error = 0;
  for (size_t i = 0; i < n; ++i) {
    const float diff = scale * codes[i] + min - x[i];
    error += weights[i] * (kind == FitError::squared ? diff * diff : std::fabs(diff));
  }
  return error;
}

float symmetric_weight(const float* x, const float* weights, size_t i) {
  return weights != nullptr ? weights[i] : x[i] * x[i];
}

void assign_symmetric_codes(const float* x, size_t n, float iscale, int nmax, int8_t* codes) {
  for (size_t i = 0; i < n; ++i) {
    codes[i] = static_cast<int8_t>(nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
  }
}

// sum w*x*l and sum w*l*l for the codes l = round(iscale * x) clamped to
// -nmax..nmax-1.
void symmetric_sums(const float* x, const float* weights, size_t n, float iscale, int nmax, float& sum_lx,
                    float& sum_l2) {
  sum_lx = 0;
  sum_l2 = 0;
  for (size_t i = 0; i < n; ++i) {
    const float l = static_cast<float>(clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
    const float w = symmetric_weight(x, weights, i);
    sum_lx += w * x[i] * l;
    sum_l2 += w * l * l;
  }
}

}  // namespace

float fit_offset_codes(const float* x, const float* weights, size_t n, int nmax, StepGrid grid, FitError error_kind,
                       uint8_t* codes, float& negated_min) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (size_t i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(codes, codes + n, uint8_t{0});
    negated_min = -min;
    return 0.0f;
  }
  const float first_iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / first_iscale;
  assign_offset_codes(x, n, first_iscale, min, nmax, codes);
  float best_error = weighted_error(x, weights, n, codes, scale, min, error_kind);

  uint8_t trial[kMaxFitElements];
  for (int step = 0; step <= grid.steps; ++step) {
    const float iscale = (grid.rmin + grid.rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (max - min);
    assign_offset_codes(x, n, iscale, min, nmax, trial);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (size_t i = 0; i < n; ++i) {
      const float wl = weights[i] * static_cast<float>(trial[i]);
      sum_l += wl;
      sum_l2 += wl * static_cast<float>(trial[i]);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float trial_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float trial_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (trial_min > 0) {  // the origin must stay at or below zero
      trial_min = 0;
      trial_scale = sum_xl / sum_l2;
    }
    const float error = weighted_error(x, weights, n, trial, trial_scale, trial_min, error_kind);
    if (error < best_error) {
      std::copy(trial, trial + n, codes);
      best_error = error;
      scale = trial_scale;
      min = trial_min;
    }
  }
  negated_min = -min;
  return scale;
}

float fit_symmetric_codes(const float* x, const float* weights, size_t n, int nmax, int8_t* codes) {
  float max = 0;
  float abs_max = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > abs_max) {
      abs_max = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (abs_max < kGroupMaxEps) {
    std::fill(codes, codes + n, int8_t{0});
    return 0.0f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  assign_symmetric_codes(x, n, iscale, nmax, codes);
  float sum_lx, sum_l2;
  symmetric_sums(x, weights, n, iscale, nmax, sum_lx, sum_l2);
  float scale = sum_l2 != 0 ? sum_lx / sum_l2 : 0.0f;
  float best = scale * sum_lx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    symmetric_sums(x, weights, n, iscale, nmax, sum_lx, sum_l2);
    if (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2) {
      assign_symmetric_codes(x, n, iscale, nmax, codes);
      scale = sum_lx / sum_l2;
      best = scale * sum_lx;
    }
  }
  return scale;
}

float fit_positive_codes(const float* x, const float* weights, size_t n, int nmax, uint8_t* codes) {
  float max = 0;
  for (size_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max < kGroupMaxEps) {
    std::fill(codes, codes + n, uint8_t{0});
    return 0.f;
  }
  // The step with the least weighted squared error among nmax/max and eight
  // steps around it (codes not clamped below: the values are >= 0).
  float iscale = static_cast<float>(nmax) / max;
  const float first_scale = 1 / iscale;
  float best_mse = 0;
  for (size_t i = 0; i < n; ++i) {
    const float diff = x[i] - first_scale * static_cast<float>(nearest_int(iscale * x[i]));
    best_mse += weights[i] * diff * diff;
  }
  for (int step = -4; step <= 4; ++step) {
    if (step == 0) continue;
    const float step_iscale = (0.1f * static_cast<float>(step) + static_cast<float>(nmax)) / max;
    const float step_scale = 1 / step_iscale;
    float mse = 0;
    for (size_t i = 0; i < n; ++i) {
      const float diff = x[i] - step_scale * static_cast<float>(std::min(nmax, nearest_int(step_iscale * x[i])));
      mse += weights[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = step_iscale;
    }
  }
  // Then up to five passes moving single codes while the fit improves (as
  // make_q3_quants does).
  int level[kMaxFitElements];
  float sum_lx = 0, sum_l2 = 0;
  for (size_t i = 0; i < n; ++i) {
    level[i] = std::min(nmax, nearest_int(iscale * x[i]));
    sum_lx += weights[i] * x[i] * static_cast<float>(level[i]);
    sum_l2 += weights[i] * static_cast<float>(level[i]) * static_cast<float>(level[i]);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (size_t i = 0; i < n; ++i) {
      const float w = weights[i];
      float slx = sum_lx - w * x[i] * static_cast<float>(level[i]);
      float sl2 = sum_l2 - w * static_cast<float>(level[i]) * static_cast<float>(level[i]);
      if (!(slx > 0 && sl2 > 0)) continue;
      const int candidate = std::min(nmax, nearest_int(x[i] * sl2 / slx));
      if (candidate == level[i]) continue;
      slx += w * x[i] * static_cast<float>(candidate);
      sl2 += w * static_cast<float>(candidate) * static_cast<float>(candidate);
      if (slx * slx * sum_l2 > sum_lx * sum_lx * sl2) {
        level[i] = candidate;
        sum_lx = slx;
        sum_l2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  // uint8_t as ggml stores them (a negative level, impossible for x >= 0,
  // would wrap the same way).
  for (size_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(level[i]);
  return sum_l2 > 0.0f ? sum_lx / sum_l2 : 0.0f;
}

}  // namespace kernels::ref::detail
