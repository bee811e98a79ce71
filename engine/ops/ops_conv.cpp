// The depthwise causal convolutions, compiled once per instruction set like
// the other row operations (ops_isa.h), in vectors over channels: LFM2's
// gated short convolution (engine/mixers/shortconv.h) and Qwen3.5's DeltaNet
// convolution (engine/mixers/delta_net.h). The scalar forms
// (shortconv_rows_ref, delta_net_conv_ref) walk channels one by one with a
// branch per tap, to find whether a position is in the state or the batch.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#include <algorithm>
#include <vector>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"

namespace engine::ops::ENGINE_OPS_ISA {
namespace {

// The taps of kLanes channels, tap-major (the file holds them channel-major),
// gathered once per vector of channels and used by every token of a batch:
// on the stack up to 16 taps (LFM2 has 3, Qwen3.5 4).
class VectorTaps {
 public:
  explicit VectorTaps(uint32_t taps) : taps_(taps) {
    if (taps > kStackTaps) heap_.resize(size_t{taps} * kLanes);
  }
  float* data() { return taps_ > kStackTaps ? heap_.data() : stack_; }
  // Channels ch .. ch + count - 1 of a (channels, taps) kernel; zeros past count.
  void gather(const float* kernel, size_t ch, size_t count) {
    float* k = data();
#if defined(ENGINE_OPS_FIXED_SVE)
    // As below, SVE's structure loads.
    if (count == kLanes && (taps_ == 3 || taps_ == 4)) {
      const float* from = kernel + ch * taps_;
      const svbool_t all = all_lanes();
      if (taps_ == 3) {
        const svfloat32x3_t v = svld3_f32(all, from);
        svst1_f32(all, k, svget3_f32(v, 0));
        svst1_f32(all, k + kLanes, svget3_f32(v, 1));
        svst1_f32(all, k + 2 * kLanes, svget3_f32(v, 2));
      } else {
        const svfloat32x4_t v = svld4_f32(all, from);
        svst1_f32(all, k, svget4_f32(v, 0));
        svst1_f32(all, k + kLanes, svget4_f32(v, 1));
        svst1_f32(all, k + 2 * kLanes, svget4_f32(v, 2));
        svst1_f32(all, k + 3 * kLanes, svget4_f32(v, 3));
      }
      return;
    }
#elif defined(__aarch64__)
    // LFM2's 3 taps and Qwen3.5's 4 of 4 channels are 12 or 16 floats in a
    // row: LD3 / LD4 de-interleave them in one instruction, where the lanes
    // one by one took 12 loads and 12 stores (LFM2, a decode token: 38.8 ->
    // 24.8 instructions per channel under qemu).
    if (count == kLanes && kLanes == 4 && (taps_ == 3 || taps_ == 4)) {
      const float* from = kernel + ch * taps_;
      if (taps_ == 3) {
        const float32x4x3_t v = vld3q_f32(from);
        for (int tap = 0; tap < 3; ++tap) vst1q_f32(k + tap * 4, v.val[tap]);
      } else {
        const float32x4x4_t v = vld4q_f32(from);
        for (int tap = 0; tap < 4; ++tap) vst1q_f32(k + tap * 4, v.val[tap]);
      }
      return;
    }
#endif
    for (uint32_t tap = 0; tap < taps_; ++tap) {
      for (size_t lane = 0; lane < kLanes; ++lane) k[tap * kLanes + lane] = lane < count ? kernel[(ch + lane) * taps_ + tap] : 0.0f;
    }
  }
  Batch tap(uint32_t i) { return Batch::load_unaligned(data() + i * kLanes); }
  // The convolution of the channels at ch for the position whose window
  // starts at row t of the sequence: sum over taps i of tap i times row(t + i),
  // the products summed in the scalar forms' order.
  template <class Row>
  Batch sum(Row&& row, uint32_t t, size_t ch, size_t count) {
    Batch s = tap(0) * load_part(row(t) + ch, count);
    for (uint32_t i = 1; i < taps_; ++i) s = fma(tap(i), load_part(row(t + i) + ch, count), s);
    return s;
  }

 private:
  static constexpr uint32_t kStackTaps = 16;
  uint32_t taps_;
  alignas(64) float stack_[kStackTaps * kLanes];
  std::vector<float> heap_;
};

}  // namespace

void shortconv_rows(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                    float* bcx, uint32_t n, float* y) {
  const uint32_t past = taps - 1;  // rows of state
  const size_t stride = 3 * size_t{d};
  const size_t width = last - first;
  // x = B * x
  for (uint32_t t = 0; t < n; ++t) {
    float* row = bcx + t * stride + first;
    for_each_vector(width, [&](size_t i, size_t count) {
      store_part(load_part(row + i, count) * load_part(row + 2 * size_t{d} + i, count), row + 2 * size_t{d} + i,
                 count);
    });
  }
  // Row j of the sequence state ++ batch: B * x of its channels.
  const auto bx = [&](uint32_t j) -> const float* {
    return j < past ? state + size_t{j} * d : bcx + (j - past) * stride + 2 * size_t{d};
  };
  VectorTaps k(taps);
  for_each_vector(width, [&](size_t i, size_t count) {
    const size_t ch = first + i;
    k.gather(kernel, ch, count);
    for (uint32_t t = 0; t < n; ++t) {
      store_part(load_part(bcx + t * stride + d + ch, count) * k.sum(bx, t, ch, count), y + size_t{t} * d + ch, count);
    }
  });
  // The new state: the last `past` rows of state ++ batch, moved forward in
  // place (row r reads row r + n, which is later: not yet overwritten).
  for (uint32_t r = 0; r < past; ++r) {
    const float* from = bx(r + n) + first;
    float* to = state + size_t{r} * d + first;
    for_each_vector(width, [&](size_t i, size_t count) { store_part(load_part(from + i, count), to + i, count); });
  }
}

// Qwen3.5's DeltaNet convolution, then silu: delta_net_conv_ref's layout.
void delta_net_conv(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                    float* window, const float* in, uint32_t n, float* out) {
  const uint32_t past = taps - 1;
  const auto row = [&](uint32_t j) { return j < past ? window + size_t{j} * channels : in + size_t{j - past} * channels; };
  VectorTaps k(taps);
  const Batch one(1.0f);
  for_each_vector(last - first, [&](size_t i, size_t count) {
    const size_t ch = first + i;
    k.gather(kernel, ch, count);
    for (uint32_t t = 0; t < n; ++t) {
      const Batch sum = k.sum(row, t, ch, count);
      store_part(sum / (one + exp_approx(-sum)), out + size_t{t} * channels + ch, count);  // silu
    }
  });
  for (uint32_t r = 0; r < past; ++r) {
    const float* from = row(r + n);
    std::copy(from + first, from + last, window + size_t{r} * channels + first);
  }
}

}  // namespace engine::ops::ENGINE_OPS_ISA
