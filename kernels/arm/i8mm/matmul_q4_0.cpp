// matmul_f32_q8_0_q4_0_8x4_i8mm: Q4_0 weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 72 = 4 x 18 bytes (no growth), kChunks = 2:
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7, every nibble XOR 8
// XOR 8 turns a code q (value q - 8) into the 4-bit two's complement of q - 8,
// so `shl 4` (low nibbles) and `and 0xF0` (high nibbles) give 16 * (q - 8) as
// int8 with 2 instructions per 32 weights; the 1/16 goes into the activation
// scale. Half g's low nibbles are elements 8g..8g+7, high nibbles 16+8g..23+8g.
// Missing rows of the last tile are zero (d = 0).
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h), scale multiplied by 1/16.
//
// run: tiles of kMr = 8 activation rows x kNr = 4 weight rows: per block 4
// pairs x 2 pairs x 4 chunks = 32 SMMLA, then per 2x2 tile one convert and one
// FMA with scale d_w * d_a. Rows left over use the 2x4 form of the same code,
// and a last single row (decode) runs on 8 tiles at once (block_tiles.h); the
// float operations per output are identical in every form: a result does not
// depend on how the rows were split. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct Q4_0 : arm::WeightType<gguf::GgmlType::Q4_0, ref::BlockQ4_0, 1.0f / 16>, NibbleLoads<Q4_0> {
  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[i] ^ 0x88;
  }

  // 16 * (q - 8) in the SMMLA operands.
  template <bool kHigh>
  __attribute__((always_inline)) static int8x16_t nibbles(uint8x16_t g) {
    return vreinterpretq_s8_u8(kHigh ? vandq_u8(g, vdupq_n_u8(0xF0)) : vshlq_n_u8(g, 4));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 =
    arm::interleaved_kernel<BlockTiles<Q4_0>>("matmul_f32_q8_0_q4_0_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
