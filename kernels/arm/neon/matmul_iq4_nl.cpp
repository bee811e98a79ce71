// matmul_f32_q8_0_iq4_nl_4x4_neon: Y = X * W^T with IQ4_NL weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a (any
//   64-bit ARM core). Instructions: AND / USHR and TBL to look the 4-bit
//   codes up in the code book (arm/iq4_codes.h), SMULL / SMLAL2 (two products
//   per int16 lane), SADDLP / SADALP into int32, ADDP, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, lhs_q8_0.h).
// - m_step = kTileM = 4, n_step = kTileN = 4 (block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_0_iq4_nl_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[16c + i] = the GGUF qs[i] of row c (elements i, low nibble, and 16 + i,
// high). The values reach +-127: |w * a| <= 16129, so the products are summed
// as Q8_0's are (NeonWideCodes, two per int16 lane).
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/iq4_codes.h"
#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/kernel_defs.h"

namespace kernels::neon {
namespace {

struct IQ4_NL : arm::BlockType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL>, arm::ColumnDot<arm::NeonWideCodes> {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < arm::kTileN; ++c)
      std::memcpy(p.qs + 16 * c, reinterpret_cast<const ref::BlockIQ4_NL*>(blocks[c])->qs, 16);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16_t table = arm::iq4_table();
    Codes w;
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) {
      const uint8x16_t raw = vld1q_u8(p.qs + 16 * c);
      w.lo[c] = arm::iq4_codes<0>(table, raw);
      w.hi[c] = arm::iq4_codes<1>(table, raw);
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::tile_kernel<arm::BlockTile<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
