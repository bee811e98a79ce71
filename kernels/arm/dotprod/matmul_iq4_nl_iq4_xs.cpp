// matmul_f32_q8_0_iq4_nl_4x4_dotprod and matmul_f32_q8_k_iq4_xs_4x4_dotprod:
// Y = X * W^T with IQ4_NL or IQ4_XS weights (kernels/matmul.h), one decoding
// of 32 codes for both.
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR and TBL to look the
//   4-bit codes up in the code book (arm/iq4_codes.h), SDOT by element,
//   SCVTF, FMUL / FADD; IQ4_XS: MLA by the sub-block scales.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: IQ4_NL: Q8_0 rows in 48-byte blocks with a float scale
//   (pack_lhs = neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h); IQ4_XS: Q8_K rows
//   (neon::pack_lhs_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (arm/neon/block_tile.h,
//   super_block_tile.h); any m and n, k a multiple of 32 (IQ4_NL) or 256.
// - result: equal to matmul_f32_q8_0_iq4_nl_1x1_ref / _q8_k_iq4_xs_1x1_ref
//   bit for bit.
//
// Layout, per block of 32 (IQ4_NL) and group of 4 rows: d[c] (fp16) of the 4
// rows, then qs[j][4c + t] = the GGUF byte qs[4j + t] of row c (elements
// 4j + t, low nibble, and 16 + 4j + t, high), Q4_0's order without its XOR.
// Per super-block of 256 (IQ4_XS): d[c], the 32 scales in 24 bytes
// (arm/iq4_codes.h), then for each sub-block s of 32 the same 64 bytes as an
// IQ4_NL block, from the GGUF qs[16s ..] of the 4 rows.
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/iq4_codes.h"
#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

// The 64 bytes of a block of 32 codes of the 4 rows, in 4-byte runs, from
// their GGUF nibbles (src[c]: 16 bytes).
inline void pack_iq4_runs(const uint8_t* const* src, uint8_t* out) {
  arm::interleave_4x4_runs(src, 0, reinterpret_cast<uint8_t(*)[16]>(out));
}

// The codes of a block of 32 packed by pack_iq4_runs.
template <size_t MR>
__attribute__((always_inline)) inline arm::RunsDot::Codes iq4_codes32(const uint8_t* qs) {
  const int8x16_t table = arm::iq4_table();
  const int8x16x4_t v = arm::load_x4<MR>(qs);
  arm::RunsDot::Codes w;
#pragma GCC unroll 4
  for (size_t j = 0; j < 4; ++j) {
    const uint8x16_t raw = vreinterpretq_u8_s8(v.val[j]);
    w.v[j] = arm::iq4_codes<0>(table, raw);
    w.v[4 + j] = arm::iq4_codes<1>(table, raw);
  }
  return w;
}

struct IQ4_NL : arm::BlockType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL>, arm::RunsDot {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) src[c] = reinterpret_cast<const ref::BlockIQ4_NL*>(blocks[c])->qs;
    pack_iq4_runs(src, p.qs);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    return iq4_codes32<MR>(p.qs);
  }
};

struct IQ4_XS : arm::IQ4XSType {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const ref::BlockIQ4_XS* blk[arm::kTileN];
    pack_fields(blocks, blk, p);
    for (size_t s = 0; s < 8; ++s) {
      const uint8_t* src[arm::kTileN] = {blk[0]->qs + 16 * s, blk[1]->qs + 16 * s, blk[2]->qs + 16 * s,
                                         blk[3]->qs + 16 * s};
      pack_iq4_runs(src, p.qs[s]);
    }
  }

  // Sub-blocks 2q and 2q + 1.
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, const Shared& scales, size_t q,
                                                     const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
    const arm::IQ4XSPairScales sc = arm::iq4_xs_pair_scales(scales, q);
#pragma GCC unroll 2
    for (size_t h = 0; h < 2; ++h) {
      const size_t s = 2 * q + h;
      const arm::RunsDot::Codes w = iq4_codes32<MR>(p.qs[s]);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub = arm::sdot_runs32(w.v, vld1q_s8(xb[i]->qs + 32 * s), vld1q_s8(xb[i]->qs + 32 * s + 16));
        isum[i] = vmlaq_s32(isum[i], sub, h == 0 ? sc.even : sc.odd);
      }
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::tile_kernel<arm::BlockTile<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulIQ4_XS = arm::tile_kernel<arm::SuperBlockTile<IQ4_XS>>(
    "matmul_f32_q8_k_iq4_xs_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
