// matmul_f32_q8_0_iq4_nl_4x4_neon and matmul_f32_q8_k_iq4_xs_4x4_neon:
// Y = X * W^T with IQ4_NL or IQ4_XS weights (kernels/matmul.h), one decoding
// of 32 codes for both.
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a (any
//   64-bit ARM core). Instructions: AND / USHR and TBL to look the 4-bit
//   codes up in the code book (arm/iq4_codes.h), SMULL / SMLAL2 (two products
//   per int16 lane), SADDLP / SADALP into int32, ADDP, SCVTF, FMUL / FADD;
//   IQ4_XS: MLA by the sub-block scales.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: IQ4_NL: Q8_0 rows in 48-byte blocks with a float scale
//   (pack_lhs = neon::pack_lhs_q8_0f, lhs_q8_0.h); IQ4_XS: Q8_K rows
//   (neon::pack_lhs_q8_k, the bytes of ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (block_tile.h,
//   super_block_tile.h); any m and n, k a multiple of 32 (IQ4_NL) or 256.
// - result: equal to matmul_f32_q8_0_iq4_nl_1x1_ref / _q8_k_iq4_xs_1x1_ref
//   bit for bit.
//
// Layout, per block of 32 (IQ4_NL) and group of 4 rows: d[c] (fp16) of the 4
// rows, then qs[16c + i] = the GGUF qs[i] of row c (elements i, low nibble,
// and 16 + i, high). Per super-block of 256 (IQ4_XS): d[c], the 32 scales
// in 24 bytes (arm/iq4_codes.h), then for each sub-block s of 32 the same 64
// bytes as an IQ4_NL block: qs[s][16c + i] = the GGUF qs[16s + i] of row c.
// The values reach +-127: |w * a| <= 16129, so the products are summed as
// Q8_0's are (NeonWideCodes, two per int16 lane); the float steps are the
// reference's (IQ4_XS: acc += (d_w * d_x) * sum_s sc_s * sum_s, the integer
// sum exact).
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/iq4_codes.h"
#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/kernel_defs.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::neon {
namespace {

// The 32 codes of the 4 rows from their 16 bytes of nibbles each (qs[16c..]).
__attribute__((always_inline)) inline arm::ColumnCodes iq4_codes32(const uint8_t* qs) {
  const int8x16_t table = arm::iq4_table();
  arm::ColumnCodes w;
#pragma GCC unroll 4
  for (size_t c = 0; c < arm::kTileN; ++c) {
    const uint8x16_t raw = vld1q_u8(qs + 16 * c);
    w.lo[c] = arm::iq4_codes<0>(table, raw);
    w.hi[c] = arm::iq4_codes<1>(table, raw);
  }
  return w;
}

struct IQ4_NL : arm::BlockType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL>, arm::ColumnDot<arm::NeonWideCodes> {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < arm::kTileN; ++c)
      std::memcpy(p.qs + 16 * c, reinterpret_cast<const ref::BlockIQ4_NL*>(blocks[c])->qs, 16);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    return iq4_codes32(p.qs);
  }
};

struct IQ4_XS : arm::IQ4XSType {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const ref::BlockIQ4_XS* blk[arm::kTileN];
    pack_fields(blocks, blk, p);
    for (size_t c = 0; c < arm::kTileN; ++c) {
      for (size_t s = 0; s < 8; ++s) std::memcpy(p.qs[s] + 16 * c, blk[c]->qs + 16 * s, 16);
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
      const arm::ColumnCodes w = iq4_codes32(p.qs[s]);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub =
            arm::dot_columns<arm::NeonWideCodes>(w, vld1q_s8(xb[i]->qs + 32 * s), vld1q_s8(xb[i]->qs + 32 * s + 16));
        isum[i] = vmlaq_s32(isum[i], sub, h == 0 ? sc.even : sc.odd);
      }
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::tile_kernel<arm::BlockTile<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_4x4_neon", Tier::neon, kRequiredFeatures);
constinit const MatmulKernel kMatmulIQ4_XS =
    arm::tile_kernel<arm::SuperBlockTile<IQ4_XS>>("matmul_f32_q8_k_iq4_xs_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
