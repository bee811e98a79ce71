// matmul_f32_q8_0_q4_0_4x4_neon: Y = X * W^T with Q4_0 weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: SHL / SSHR
//   to unpack nibbles, SMULL / SMLAL(2) into int16 lanes, ADDP / SADDLP,
//   SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight block unpacked once for 4 rows of X), decode and the m % 4
//   rows run 1 x 4 tiles, in one run() (block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_0_q4_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, so
// one load gives the 4 scales, then qs[c] = the GGUF qs of row c XOR 0x88: each
// nibble q becomes the 4-bit two's complement of q - 8, so SHL #4 + SSHR #4
// (low) and SSHR #4 (high) give the codes -8..7 with no subtraction.
//
// Per block and row of X, the 4 columns' integer sums come from SMULL/SMLAL
// into int16 lanes (4 products each) and one ADDP tree (NeonSmallCodes).
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/kernel_defs.h"

namespace kernels::neon {
namespace {

struct Q4_0 : arm::BlockType<gguf::GgmlType::Q4_0, ref::BlockQ4_0>, arm::ColumnDot<arm::NeonSmallCodes> {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < arm::kTileN; ++c) {
      const uint8_t* qs = reinterpret_cast<const ref::BlockQ4_0*>(blocks[c])->qs;
      vst1q_u8(p.qs + 16 * c, veorq_u8(vld1q_u8(qs), vdupq_n_u8(0x88)));
    }
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    Codes w;
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) {
      const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(p.qs + 16 * c));
      w.lo[c] = vshrq_n_s8(vshlq_n_s8(v, 4), 4);
      w.hi[c] = vshrq_n_s8(v, 4);
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 =
    arm::tile_kernel<arm::BlockTile<Q4_0>>("matmul_f32_q8_0_q4_0_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
