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
#include "kernels/arm/in_order.h"
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

// The decode row of a tile on an in-order core (q8_0_row_in_order), two
// blocks an iteration. The compiled row (q8_0_row_tiles, 8 tiles a pass) runs
// one SMMLA chain of 8 a block and tile: on LLVM's Cortex-A510 model it takes
// 0.363 cycles a weight, waiting on each SMMLA's result. This loop
// (bench/cycles/in_order/q4_0_i8mm.s, ordered by order_search.py --cpu
// cortex-a510): two SMMLA chains a block (chunks 0, 2 and 1, 3; the pair of
// rows (2, 3) against the codes moved to the high half by EXT, as
// load_row_codes does), four in flight, single LDRs, the float work of a
// pair software pipelined into the next iteration. Cortex-A510 model: 0.186
// cycles a weight (47 a pair of blocks), 2.0x fewer, 1.05x its port bound in
// this order (docs/cycles.md); on the out-of-order cores 20-28% slower than
// the compiled row (per tile, the row's codes are loaded and moved for each
// tile: V2 0.055 against 0.046), so it runs on in-order cores only.
// The sums are the reference's integers (times 16), the scaling and the
// fused adds q8_0_row_tiles', block by block: its results bit for bit.
__attribute__((noinline)) float32x4_t pairs_in_order(const uint8_t* w, const uint8_t* x, size_t pairs,
                                                     float32x4_t acc) {
  static_assert(kTileBlockBytes<Q4_0> == 72 && kLhsBlockBytes<Q4_0> == 80 && kLhsCodesOffset<Q4_0> == 16);
  const uint8_t* end = x + 2 * pairs * kLhsBlockBytes<Q4_0>;
  asm volatile(
      "movi d20, #0\n"
      "movi d21, #0\n"
      "movi d22, #0\n"
      "movi d23, #0\n"
      "movi d24, #0\n"
      "movi d25, #0\n"
      "1:\n"
      "ldur q0, [%[w], #8]\n"
      "ldur q2, [%[w], #40]\n"
      "ldr q4, [%[x], #16]\n"
      "ldr q5, [%[x], #32]\n"
      "ldr q30, [%[w], #96]\n"
      "movi v31.16b, #0xf0\n"
      "movi d26, #0\n"
      "fcvtl v22.4s, v22.4h\n"
      "shl v12.16b, v0.16b, #4\n"
      "shl v16.16b, v2.16b, #4\n"
      "ldur q1, [%[w], #24]\n"
      "ldur q3, [%[w], #56]\n"
      "ldr q6, [%[x], #48]\n"
      "and v17.16b, v2.16b, v31.16b\n"
      "ext v8.16b, v4.16b, v4.16b, #8\n"
      "and v15.16b, v1.16b, v31.16b\n"
      "smmla v26.4s, v4.16b, v12.16b\n"
      "shl v14.16b, v1.16b, #4\n"
      "movi d27, #0\n"
      "fmul v22.4s, v22.4s, v24.s[0]\n"
      "fcvtl v23.4s, v23.4h\n"
      "shl v18.16b, v3.16b, #4\n"
      "scvtf v20.4s, v20.4s\n"
      "ext v10.16b, v6.16b, v6.16b, #8\n"
      "ext v9.16b, v5.16b, v5.16b, #8\n"
      "smmla v26.4s, v8.16b, v16.16b\n"
      "smmla v27.4s, v5.16b, v14.16b\n"
      "and v13.16b, v0.16b, v31.16b\n"
      "and v19.16b, v3.16b, v31.16b\n"
      "ldr q7, [%[x], #64]\n"
      "fmla %[acc].4s, v20.4s, v22.4s\n"
      "ldr q29, [%[w], #80]\n"
      "ldr q3, [%[x], #112]\n"
      "ldr q2, [%[x], #96]\n"
      "smmla v27.4s, v9.16b, v18.16b\n"
      "smmla v26.4s, v6.16b, v13.16b\n"
      "ldr q12, [%[x], #144]\n"
      "ldr q4, [%[x], #128]\n"
      "ldr q1, [%[w], #128]\n"
      "ext v11.16b, v7.16b, v7.16b, #8\n"
      "fmul v23.4s, v23.4s, v25.s[0]\n"
      "smmla v26.4s, v10.16b, v17.16b\n"
      "smmla v27.4s, v7.16b, v15.16b\n"
      "shl v7.16b, v1.16b, #4\n"
      "shl v5.16b, v30.16b, #4\n"
      "ldr s25, [%[x], #80]\n"
      "and v14.16b, v30.16b, v31.16b\n"
      "shl v10.16b, v29.16b, #4\n"
      "ldr q0, [%[w], #112]\n"
      "ext v13.16b, v12.16b, v12.16b, #8\n"
      "scvtf v21.4s, v21.4s\n"
      "smmla v27.4s, v11.16b, v19.16b\n"
      "movi d19, #0\n"
      "movi d11, #0\n"
      "ext v16.16b, v3.16b, v3.16b, #8\n"
      "ext v6.16b, v4.16b, v4.16b, #8\n"
      "shl v9.16b, v0.16b, #4\n"
      "fmla %[acc].4s, v21.4s, v23.4s\n"
      "ldr s24, [%[x], #0]\n"
      "smmla v19.4s, v2.16b, v10.16b\n"
      "smmla v11.4s, v3.16b, v5.16b\n"
      "ext v8.16b, v2.16b, v2.16b, #8\n"
      "ldr d23, [%[w], #72]\n"
      "and v17.16b, v29.16b, v31.16b\n"
      "add %[x], %[x], #160\n"
      "smmla v19.4s, v8.16b, v9.16b\n"
      "smmla v11.4s, v16.16b, v7.16b\n"
      "ldr d22, [%[w], #0]\n"
      "and v18.16b, v0.16b, v31.16b\n"
      "add v20.4s, v26.4s, v27.4s\n"
      "and v15.16b, v1.16b, v31.16b\n"
      "smmla v11.4s, v12.16b, v14.16b\n"
      "smmla v19.4s, v4.16b, v17.16b\n"
      "add %[w], %[w], #144\n"
      "smmla v19.4s, v6.16b, v18.16b\n"
      "smmla v11.4s, v13.16b, v15.16b\n"
      "cmp %[x], %[end]\n"
      "add v21.4s, v19.4s, v11.4s\n"
      "b.ne 1b\n"
      "fcvtl v22.4s, v22.4h\n"
      "fmul v22.4s, v22.4s, v24.s[0]\n"
      "fcvtl v23.4s, v23.4h\n"
      "scvtf v20.4s, v20.4s\n"
      "fmla %[acc].4s, v20.4s, v22.4s\n"
      "fmul v23.4s, v23.4s, v25.s[0]\n"
      "scvtf v21.4s, v21.4s\n"
      "fmla %[acc].4s, v21.4s, v23.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 = arm::interleaved_kernel<InOrderBlockTiles<Q4_0, pairs_in_order>>(
    "matmul_f32_q8_0_q4_0_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
