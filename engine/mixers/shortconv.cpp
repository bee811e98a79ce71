#include "engine/mixers/shortconv.h"

#include <algorithm>

#include "engine/model/model_config.h"
#include "engine/ops/ops.h"

namespace engine {

void shortconv_rows_ref(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                        float* bcx, uint32_t n, float* y) {
  const uint32_t past = taps - 1;  // rows of state
  const size_t stride = 3 * size_t{d};
  for (uint32_t t = 0; t < n; ++t) {
    float* row = bcx + t * stride;
    for (uint32_t ch = first; ch < last; ++ch) row[2 * d + ch] *= row[ch];  // x = B * x
  }
  // B * x of position j of the sequence state ++ batch.
  const auto bx = [&](uint32_t j, uint32_t ch) {
    return j < past ? state[size_t{j} * d + ch] : bcx[(j - past) * stride + 2 * d + ch];
  };
  for (uint32_t t = 0; t < n; ++t) {
    const float* c = bcx + t * stride + d;
    for (uint32_t ch = first; ch < last; ++ch) {
      const float* k = kernel + size_t{ch} * taps;
      float sum = 0.0f;
      for (uint32_t i = 0; i < taps; ++i) sum += k[i] * bx(t + i, ch);
      y[size_t{t} * d + ch] = c[ch] * sum;
    }
  }
  // The new state: the last `past` rows of state ++ batch, moved forward in
  // place (row r reads row r + n, which is later: not yet overwritten).
  for (uint32_t r = 0; r < past; ++r) {
    for (uint32_t ch = first; ch < last; ++ch) state[size_t{r} * d + ch] = bx(r + n, ch);
  }
}

uint64_t ShortConvMixer::row_floats(const ModelConfig& c) {
  const bool any = std::any_of(c.layers.begin(), c.layers.end(),
                               [](const LayerSpec& l) { return l.mixer == MixerKind::shortconv; });
  return any ? 4 * uint64_t{c.n_embd} : 0;
}

ShortConvMixer::ShortConvMixer(const ModelConfig& c, uint32_t n_batch) : d_(c.n_embd) {
  if (row_floats(c) == 0) return;
  bcx_.resize(size_t{n_batch} * 3 * d_);
  y_.resize(size_t{n_batch} * d_);
}

void ShortConvMixer::forward(Compute& compute, uint32_t taps, const LayerWeights& w, float* state, uint32_t n,
                             float* xn) {
  compute.linear(w.conv_in, xn, n, bcx_.data());  // (n, 3 d)
  // Channels are independent: each piece of them is one task.
  compute.profiled(&Profile::shortconv, [&] {
    compute.parallel_range(d_, 64, [&](size_t first, size_t last) {
      ops::shortconv_rows(w.conv_kernel.data(), taps, d_, static_cast<uint32_t>(first), static_cast<uint32_t>(last),
                          state, bcx_.data(), n, y_.data());
    });
  });
  compute.linear(w.conv_out, y_.data(), n, xn);
}

}  // namespace engine
