// matmul_f32_q8_1_q4_1_4x4_neon: Y = X * W^T with Q4_1 weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a (any
//   64-bit ARM core). Instructions: AND / USHR to unpack nibbles, SMULL /
//   SMLAL(2) into int16 lanes, ADDP / SADDLP, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_1 rows in 48-byte blocks with float d and s (pack_lhs =
//   neon::pack_lhs_q8_1f, lhs_q8_0.h).
// - m_step = kTileM = 4, n_step = kTileN = 4 (block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_1_q4_1_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c], m[c] (fp16) of the 4
// rows, then qs[16c + i] = the GGUF qs[i] of row c (elements i, low nibble,
// and 16 + i, high). The codes 0..15 times +-127 stay inside NeonSmallCodes'
// int16 lanes; the loop adds m_w s_x per block (block_tile.h).
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/kernel_defs.h"

namespace kernels::neon {
namespace {

struct Q4_1 : arm::MinBlockType<gguf::GgmlType::Q4_1, ref::BlockQ4_1>, arm::ColumnDot<arm::NeonSmallCodes> {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < arm::kTileN; ++c)
      std::memcpy(p.qs + 16 * c, reinterpret_cast<const ref::BlockQ4_1*>(blocks[c])->qs, 16);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    Codes w;
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) {
      const uint8x16_t raw = vld1q_u8(p.qs + 16 * c);
      w.lo[c] = vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F)));
      w.hi[c] = vreinterpretq_s8_u8(vshrq_n_u8(raw, 4));
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_1 =
    arm::tile_kernel<arm::BlockTile<Q4_1>>("matmul_f32_q8_1_q4_1_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
