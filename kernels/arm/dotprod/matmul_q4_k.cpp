// matmul_f32_q8_k_q4_k_4x4_dotprod: Y = X * W^T with Q4_K weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR to unpack nibbles,
//   SDOT by element, MLA by the sub-block scales, SMLAL by lane for the mins,
//   SCVTF, FMUL / FSUB / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q4_Kx4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run(); any m and n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q4_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c], dmin[c]   fp16 of the 4 rows
//   scales[3][16]   the 6-bit scales and mins, unpacked from the GGUF 12-byte
//                   form and bit-packed (arm/neon/packed.h pack_six_bit) as four
//                   vectors u0 = sc of sub-blocks 0-3, u1 = sc 4-7, u2 = m 0-3,
//                   u3 = m 4-7, byte 4s + c = sub-block s of row c
//   qs[p][j][4c+t]  the GGUF byte qs[32p + 4j + t] of row c: element 4j + t of
//                   sub-block 2p (low nibble) and of sub-block 2p + 1 (high)
#if !defined(__ARM_FEATURE_DOTPROD)
#error "arm/dotprod needs SDOT: compile with -march=armv8.2-a+dotprod"
#endif
#if defined(__ARM_FEATURE_MATMUL_INT8) || defined(__ARM_FEATURE_SVE)
#error "arm/dotprod must not assume i8mm or SVE: compile it with exactly -march=armv8.2-a+dotprod"
#endif

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernels.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"

namespace kernels::dotprod {
namespace {

constexpr uint64_t kFeatures = arm::feature_bit(Feature::asimd) | arm::feature_bit(Feature::dotprod);

using arm::kTileN;
using ref::BlockQ4_K;
using ref::BlockQ8_K;

struct BlockQ4_Kx4 {
  uint16_t d[kTileN];
  uint16_t dmin[kTileN];
  uint8_t scales[3][16];
  uint8_t qs[4][8][16];
};
static_assert(sizeof(BlockQ4_Kx4) == kTileN * sizeof(BlockQ4_K));

struct Q4_KPacked {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ8_K); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ4_K); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ4_Kx4*>(out);
    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ4_K* blk[kTileN];
      for (size_t c = 0; c < kTileN; ++c) blk[c] = reinterpret_cast<const BlockQ4_K*>(rows[c]) + b;
      BlockQ4_Kx4& p = packed[b];
      for (size_t c = 0; c < kTileN; ++c) {
        p.d[c] = blk[c]->d;
        p.dmin[c] = blk[c]->dmin;
      }
      arm::pack_q4_k_scales(blk, p.scales);
      const uint8_t* src[kTileN] = {blk[0]->qs, blk[1]->qs, blk[2]->qs, blk[3]->qs};
      for (size_t q = 0; q < 4; ++q) {
        arm::interleave_4x4_runs(src, 32 * q, p.qs[q]);
        arm::interleave_4x4_runs(src, 32 * q + 16, p.qs[q] + 4);
      }
    }
  }

  // Sub-blocks 2q (low nibbles) and 2q + 1 (high): isum[i] += scale * (integer
  // dot) for each row i.
  template <size_t MR>
  __attribute__((always_inline)) static void sub_block_pair(const BlockQ4_Kx4& p, size_t q, const BlockQ8_K* const* xb,
                                                            int32x4_t* isum) {
    const uint8x16_t low_nibble = vdupq_n_u8(0x0F);
    const arm::SubBlockPairScales scales = arm::q4_k_pair_scales(p.scales, q);
#pragma GCC unroll 2
    for (size_t half = 0; half < 2; ++half) {
      // Loaded again for the high nibbles: keeping them would hold 8 more
      // registers through the 4-row tile.
      int8x16_t v[8];
#pragma GCC unroll 8
      for (size_t j = 0; j < 8; ++j) {
        const uint8x16_t raw = vld1q_u8(p.qs[q][j]);
        v[j] = vreinterpretq_s8_u8(half == 0 ? vandq_u8(raw, low_nibble) : vshrq_n_u8(raw, 4));
      }
      const size_t s = 2 * q + half;
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int8x16_t a0 = vld1q_s8(xb[i]->qs + 32 * s);
        const int8x16_t a1 = vld1q_s8(xb[i]->qs + 32 * s + 16);
        int32x4_t sub = vdotq_laneq_s32(vdupq_n_s32(0), v[0], a0, 0);
        sub = vdotq_laneq_s32(sub, v[1], a0, 1);
        sub = vdotq_laneq_s32(sub, v[2], a0, 2);
        sub = vdotq_laneq_s32(sub, v[3], a0, 3);
        sub = vdotq_laneq_s32(sub, v[4], a1, 0);
        sub = vdotq_laneq_s32(sub, v[5], a1, 1);
        sub = vdotq_laneq_s32(sub, v[6], a1, 2);
        sub = vdotq_laneq_s32(sub, v[7], a1, 3);
        isum[i] = vmlaq_s32(isum[i], sub, half == 0 ? scales.even : scales.odd);
      }
    }
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const BlockQ4_Kx4*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ4_Kx4& p = w[b];
      const BlockQ8_K* xb[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) xb[i] = reinterpret_cast<const BlockQ8_K*>(x[i]) + b;

      int32x4_t isum[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) isum[i] = vdupq_n_s32(0);

      // A loop, not unrolled: unrolled, GCC hoists all 32 weight loads of the
      // super-block and spills them (+40% instructions in the 4-row tile, and
      // no gain in decode; counted with kernel_insn).
#pragma GCC unroll 1
      for (size_t q = 0; q < 4; ++q) sub_block_pair<MR>(p, q, xb, isum);
      // The mins, after the loop so that their registers are free during it.
      const arm::Q4KMins mins = arm::q4_k_mins(p.scales);
      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
      const float32x4_t dminw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.dmin)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const float32x4_t min_term =
            vmulq_f32(vmulq_n_f32(dminw, xb[i]->d), vcvtq_f32_s32(arm::q4_k_mins_dot(mins, *xb[i])));
        const float32x4_t d = vmulq_n_f32(dw, xb[i]->d);
        acc[i] = vaddq_f32(acc[i], vsubq_f32(vmulq_f32(d, vcvtq_f32_s32(isum[i])), min_term));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q4_k_kernel() {
  return arm::packed_kernel<Q4_KPacked>("matmul_f32_q8_k_q4_k_4x4_dotprod", Tier::dotprod, kFeatures,
                                        gguf::GgmlType::Q4_K, gguf::GgmlType::Q8_K, neon::pack_lhs_q8_k);
}

}  // namespace kernels::dotprod
