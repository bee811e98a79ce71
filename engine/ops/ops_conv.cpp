// The gated short convolution of LFM2 (engine/mixers/shortconv.h), compiled
// once per instruction set like the other row operations (ops_isa.h), in
// vectors over channels: the scalar form (shortconv_rows_ref) walks channels
// one by one with a branch per tap, to find whether a position is in the
// state or the batch.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#include <vector>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"

namespace engine::ops::ENGINE_OPS_ISA {

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
  // The taps of kLanes channels, tap-major (the file holds them channel-major),
  // gathered once per vector of channels and used by every token of the batch.
  constexpr uint32_t kStackTaps = 16;  // LFM2 has 3
  alignas(64) float stack_taps[kStackTaps * kLanes];
  std::vector<float> heap_taps;
  float* k = stack_taps;
  if (taps > kStackTaps) {
    heap_taps.resize(size_t{taps} * kLanes);
    k = heap_taps.data();
  }
  for_each_vector(width, [&](size_t i, size_t count) {
    const size_t ch = first + i;
#if defined(__aarch64__)
    // LFM2's 3 taps of 4 channels are 12 floats in a row: LD3 de-interleaves
    // them in one instruction, where the lanes one by one took 12 loads and
    // 12 stores (a decode token 38.8 -> 24.8 instructions per channel under qemu).
    if (taps == 3 && count == kLanes && kLanes == 4) {
      const float32x4x3_t v = vld3q_f32(kernel + ch * 3);
      vst1q_f32(k, v.val[0]);
      vst1q_f32(k + 4, v.val[1]);
      vst1q_f32(k + 8, v.val[2]);
    } else
#endif
    {
      for (uint32_t tap = 0; tap < taps; ++tap) {
        for (size_t lane = 0; lane < kLanes; ++lane) {
          k[tap * kLanes + lane] = lane < count ? kernel[(ch + lane) * taps + tap] : 0.0f;
        }
      }
    }
    for (uint32_t t = 0; t < n; ++t) {
      // The same products summed in the same order as the scalar form.
      Batch sum = Batch::load_unaligned(k) * load_part(bx(t) + ch, count);
      for (uint32_t tap = 1; tap < taps; ++tap) {
        sum = xsimd::fma(Batch::load_unaligned(k + tap * kLanes), load_part(bx(t + tap) + ch, count), sum);
      }
      store_part(load_part(bcx + t * stride + d + ch, count) * sum, y + size_t{t} * d + ch, count);
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

}  // namespace engine::ops::ENGINE_OPS_ISA
