// matmul_f32_q8_1_q4_1_8x4_i8mm: Q4_1 weights x Q8_1 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 80 = 4 x 20 bytes (no growth), kChunks = 2:
//   uint16 d[4], m[4]             fp16 scales and mins of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7 (GGUF qs: the low nibbles are
//                                 elements 8g.., the high ones 16+8g..)
// The codes 0..15 with AND or USHR; the loops add m_w s_a per block.
// Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_1 pairs (lhs_pairs.h). run: block_tiles.h, as Q4_0:
// m_step 8, n_step 4; a result does not depend on the split of the rows.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct Q4_1 : arm::WeightType<gguf::GgmlType::Q4_1, ref::BlockQ4_1>, NibbleLoads<Q4_1, true> {
  static constexpr bool kMin = true;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[i];
  }

  template <bool kHigh>
  __attribute__((always_inline)) static int8x16_t nibbles(uint8x16_t g) {
    return vreinterpretq_s8_u8(kHigh ? vshrq_n_u8(g, 4) : vandq_u8(g, vdupq_n_u8(0x0F)));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_1 =
    arm::interleaved_kernel<BlockTiles<Q4_1>>("matmul_f32_q8_1_q4_1_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
