// matmul_f32_q8_0_iq4_nl_8x4_i8mm: IQ4_NL weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 72 = 4 x 18 bytes (no growth), kChunks = 2:
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7 (GGUF qs: the low nibbles are
//                                 elements 8g.., the high ones 16+8g..)
// Q4_0's layout without its XOR; each nibble is looked up in the code book
// (arm/iq4_codes.h: AND or USHR, then TBL), the reference's int8 values.
// Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h). run: block_tiles.h, as Q4_0 and
// Q8_0: m_step 8, n_step 4; a result does not depend on the split of the rows.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/iq4_codes.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct IQ4_NL : arm::WeightType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL>, NibbleLoads<IQ4_NL> {
  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[i];
  }

  template <bool kHigh>
  __attribute__((always_inline)) static int8x16_t nibbles(uint8x16_t g) {
    return arm::iq4_codes<kHigh ? 1 : 0>(arm::iq4_table(), g);
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::interleaved_kernel<BlockTiles<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
