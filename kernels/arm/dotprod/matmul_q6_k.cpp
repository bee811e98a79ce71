// matmul_f32_q8_k_q6_k_4x4_dotprod: Y = X * W^T with Q6_K weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / SHL / SLI to unpack the 6-bit
//   codes, SDOT by element, MLA by the sub-block scales, SCVTF (fixed point),
//   FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run() (arm/neon/super_block_tile.h); any m and
//   n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q6_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c]              fp16 of the 4 rows
//   scales[g][4s+c]   int8 scale of sub-block 4g + s (16 elements) of row c
//   codes[s][3][16]   sub-block s: its four vectors j = 0..3 (byte 4c + t =
//                     element 16s + 4j + t of row c) bit-packed by
//                     pack_six_bit (arm/neon/packed.h) as u = code ^ 0x20.
// Unpacked, each vector holds u << 2 in int8: the XOR makes that 4 * (code - 32)
// (the reference's -32..31, times 4) with no subtraction; SDOT then sums 4x the
// reference's integers, and SCVTF #2 divides by 4 exactly.
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <cstddef>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/in_order.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

// Codes 4x the reference's (kFracBits 2); the 1-row tile unrolls the quarters.
struct Q6_K : arm::SuperBlockType<gguf::GgmlType::Q6_K, ref::BlockQ6_K, arm::Q6KPacked, 2, true>, arm::NoMins {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const ref::BlockQ6_K* blk[arm::kTileN];
    arm::pack_q6_k_header(blocks, blk, p);
    const uint8x16_t flip = vdupq_n_u8(0x20);
    for (size_t s = 0; s < 16; ++s) {
      uint8x16_t u[4];  // u[j]: elements 4j..4j+3 of the sub-block, 4 rows side by side
      arm::transpose_4x4_runs(
          veorq_u8(arm::q6_k_codes16(*blk[0], s), flip), veorq_u8(arm::q6_k_codes16(*blk[1], s), flip),
          veorq_u8(arm::q6_k_codes16(*blk[2], s), flip), veorq_u8(arm::q6_k_codes16(*blk[3], s), flip), u);
      arm::pack_six_bit_x16(u[0], u[1], u[2], u[3], p.codes[s][0], p.codes[s][1], p.codes[s][2]);
    }
  }

  // Sub-blocks 4g .. 4g + 3.
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t g, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const uint8x16_t top_six = vdupq_n_u8(0xFC);
    const arm::Q6KQuarterScales scales = arm::q6_k_quarter_scales(p, g);
#pragma GCC unroll 4
    for (size_t t = 0; t < 4; ++t) {
      const size_t s = 4 * g + t;
      const uint8x16x3_t abc = vld1q_u8_x3(p.codes[s][0]);
      const int8x16_t v[4] = {vreinterpretq_s8_u8(vandq_u8(abc.val[0], top_six)),
                              vreinterpretq_s8_u8(vandq_u8(abc.val[1], top_six)),
                              vreinterpretq_s8_u8(vandq_u8(abc.val[2], top_six)),
                              vreinterpretq_s8_u8(arm::six_bit_fourth_high(abc.val[0], abc.val[1], abc.val[2]))};
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub = arm::sdot_runs16(vdupq_n_s32(0), v, vld1q_s8(xb[i]->qs + 16 * s));
        isum[i] = vmlaq_s32(isum[i], sub, scales.sc[t]);
      }
    }
  }
};

using Q6_KTile = arm::SuperBlockTile<Q6_K>;

// The decode row of a group on an in-order core (run_in_order), one
// super-block an iteration. The compiled row (SuperBlockTile's compute<1>)
// takes 0.507 cycles a weight on LLVM's Cortex-A55 model, 1.32x what its
// instructions need in their order: it waits on its one SDOT chain a
// sub-block and on LD1 of three registers. This loop
// (bench/cycles/in_order/q6_k_dotprod.s) is GCC's instructions with single
// LDRs at offsets from the super-block's codes, the float work of a
// super-block software pipelined into the next iteration, ordered by
// order_search.py --schedule (list scheduling by the model, every value
// renamed to the register free the longest) and single moves. Cortex-A55
// model: 0.291 cycles a weight (298 a super-block of the group), 1.7x fewer,
// 1.02x its port bound in this order (docs/cycles.md): what limits it is
// issue, the A55 issuing its Q-register operations one a cycle. The integer
// sums and the float operations are compute<1>'s, in its order: the results
// of run() bit for bit (InOrderSchedule, TierMatmul).
__attribute__((noinline)) float32x4_t q6_k_super_blocks_in_order(const Q6_K::Packed* packed, const ref::BlockQ8_K* x,
                                                                 size_t count, float32x4_t acc) {
  // The offsets the loop's lines use, from w = the codes of the first super-block.
  static_assert(sizeof(Q6_K::Packed) == 840 && offsetof(Q6_K::Packed, scales) == 8 &&
                offsetof(Q6_K::Packed, codes) == 72);
  static_assert(sizeof(ref::BlockQ8_K) == 292 && offsetof(ref::BlockQ8_K, qs) == 4);
  const uint8_t* w = reinterpret_cast<const uint8_t*>(packed) + offsetof(Q6_K::Packed, codes);
  const ref::BlockQ8_K* end = x + count;
  asm volatile(
      "movi d0, #0\n"
      "movi d1, #0\n"
      "movi d2, #0\n"
      "movi d4, #0\n"
      "movi d7, #0\n"
      "movi d12, #0\n"
      "movi d16, #0\n"
      "1:\n"
      "ldr q23, [%[w], #112]\n"
      "movi v3.16b, #0xfc\n"
      "fcvtl v4.4s, v2.4h\n"
      "movi v5.4s, #0\n"
      "ldr q6, [%[w], #0]\n"
      "ldr q18, [%[w], #64]\n"
      "scvtf v7.4s, v0.4s, #2\n"
      "ldr q9, [%[w], #16]\n"
      "ldr q19, [%[w], #96]\n"
      "shl v10.16b, v6.16b, #2\n"
      "ldr q11, [%[w], #32]\n"
      "fmul v12.4s, v1.4s, v4.4s\n"
      "sli v10.16b, v9.16b, #4\n"
      "movi v14.4s, #0\n"
      "ldur q15, [%[x], #20]\n"
      "ldur q8, [%[x], #4]\n"
      "ldr q13, [%[w], #48]\n"
      "fmul v16.4s, v12.4s, v7.4s\n"
      "ldur q17, [%[w], #-64]\n"
      "sli v10.16b, v11.16b, #6\n"
      "shl v20.16b, v13.16b, #2\n"
      "and v25.16b, v3.16b, v6.16b\n"
      "ldr q21, [%[w], #80]\n"
      "sxtl v22.8h, v17.8b\n"
      "sli v20.16b, v18.16b, #4\n"
      "sdot v5.4s, v25.16b, v8.4b[0]\n"
      "sxtl2 v26.8h, v17.16b\n"
      "shl v27.16b, v19.16b, #2\n"
      "and v29.16b, v3.16b, v9.16b\n"
      "ldr q30, [%[w], #128]\n"
      "sli v27.16b, v23.16b, #4\n"
      "sdot v5.4s, v29.16b, v8.4b[1]\n"
      "sli v20.16b, v21.16b, #6\n"
      "sxtl v24.4s, v22.4h\n"
      "and v0.16b, v3.16b, v11.16b\n"
      "ldr q2, [%[w], #144]\n"
      "sxtl v1.4s, v26.4h\n"
      "sdot v5.4s, v0.16b, v8.4b[2]\n"
      "movi v4.4s, #0\n"
      "fadd %[acc].4s, %[acc].4s, v16.4s\n"
      "ldur q7, [%[w], #-48]\n"
      "sdot v5.4s, v10.16b, v8.4b[3]\n"
      "ldr q12, [%[w], #160]\n"
      "sxtl2 v16.4s, v26.8h\n"
      "shl v6.16b, v2.16b, #2\n"
      "and v25.16b, v3.16b, v13.16b\n"
      "sli v27.16b, v30.16b, #6\n"
      "sdot v14.4s, v25.16b, v15.4b[0]\n"
      "mul v0.4s, v5.4s, v24.4s\n"
      "ldur q31, [%[x], #36]\n"
      "sli v6.16b, v12.16b, #4\n"
      "ldr q17, [%[w], #176]\n"
      "sxtl2 v9.4s, v22.8h\n"
      "ldur q29, [%[x], #52]\n"
      "sxtl v11.8h, v7.8b\n"
      "and v8.16b, v3.16b, v18.16b\n"
      "and v5.16b, v3.16b, v19.16b\n"
      "ldr q10, [%[w], #192]\n"
      "sdot v14.4s, v8.16b, v15.4b[1]\n"
      "ldur q13, [%[x], #164]\n"
      "sxtl2 v25.8h, v7.16b\n"
      "ldr q24, [%[w], #208]\n"
      "sdot v4.4s, v5.16b, v31.4b[0]\n"
      "ldur q22, [%[x], #68]\n"
      "and v18.16b, v3.16b, v21.16b\n"
      "and v8.16b, v3.16b, v23.16b\n"
      "sdot v14.4s, v18.16b, v15.4b[2]\n"
      "movi v7.4s, #0\n"
      "movi v19.4s, #0\n"
      "movi v26.4s, #0\n"
      "sdot v14.4s, v20.16b, v15.4b[3]\n"
      "sdot v4.4s, v8.16b, v31.4b[1]\n"
      "shl v21.16b, v10.16b, #2\n"
      "and v23.16b, v3.16b, v30.16b\n"
      "ldr q18, [%[w], #240]\n"
      "sdot v4.4s, v23.16b, v31.4b[2]\n"
      "ldr q8, [%[w], #256]\n"
      "sli v21.16b, v24.16b, #4\n"
      "mla v0.4s, v14.4s, v9.4s\n"
      "sdot v4.4s, v27.16b, v31.4b[3]\n"
      "ldr q15, [%[w], #272]\n"
      "and v20.16b, v3.16b, v2.16b\n"
      "ldr q14, [%[w], #288]\n"
      "sdot v26.4s, v20.16b, v29.4b[0]\n"
      "mla v0.4s, v4.4s, v1.4s\n"
      "ldur q30, [%[x], #84]\n"
      "shl v23.16b, v18.16b, #2\n"
      "and v9.16b, v3.16b, v12.16b\n"
      "ldr q5, [%[w], #224]\n"
      "sdot v26.4s, v9.16b, v29.4b[1]\n"
      "sli v23.16b, v8.16b, #4\n"
      "sli v21.16b, v5.16b, #6\n"
      "sli v6.16b, v17.16b, #6\n"
      "sxtl v27.4s, v11.4h\n"
      "ldur q31, [%[w], #-32]\n"
      "sli v23.16b, v15.16b, #6\n"
      "sxtl2 v2.4s, v11.8h\n"
      "and v20.16b, v3.16b, v17.16b\n"
      "movi v1.4s, #0\n"
      "sdot v26.4s, v20.16b, v29.4b[2]\n"
      "and v17.16b, v3.16b, v10.16b\n"
      "and v4.16b, v3.16b, v18.16b\n"
      "sdot v1.4s, v4.16b, v30.4b[0]\n"
      "sdot v26.4s, v6.16b, v29.4b[3]\n"
      "ldr q11, [%[w], #368]\n"
      "ldr q9, [%[w], #304]\n"
      "sdot v7.4s, v17.16b, v22.4b[0]\n"
      "mla v0.4s, v26.4s, v16.4s\n"
      "ldr q20, [%[w], #320]\n"
      "shl v18.16b, v14.16b, #2\n"
      "and v4.16b, v3.16b, v8.16b\n"
      "and v6.16b, v3.16b, v24.16b\n"
      "and v16.16b, v3.16b, v15.16b\n"
      "ldr q29, [%[w], #336]\n"
      "movi v10.4s, #0\n"
      "sdot v1.4s, v4.16b, v30.4b[1]\n"
      "sdot v7.4s, v6.16b, v22.4b[1]\n"
      "sli v18.16b, v9.16b, #4\n"
      "ldur q12, [%[x], #116]\n"
      "sxtl v17.4s, v25.4h\n"
      "and v26.16b, v3.16b, v5.16b\n"
      "ldur q8, [%[x], #100]\n"
      "sdot v1.4s, v16.16b, v30.4b[2]\n"
      "sdot v7.4s, v26.16b, v22.4b[2]\n"
      "sli v18.16b, v20.16b, #6\n"
      "ldr q24, [%[w], #384]\n"
      "sdot v1.4s, v23.16b, v30.4b[3]\n"
      "sdot v7.4s, v21.16b, v22.4b[3]\n"
      "movi v4.4s, #0\n"
      "ldr q6, [%[w], #352]\n"
      "shl v15.16b, v29.16b, #2\n"
      "and v5.16b, v3.16b, v14.16b\n"
      "ldr q16, [%[w], #400]\n"
      "sdot v10.4s, v5.16b, v8.4b[0]\n"
      "mla v0.4s, v7.4s, v27.4s\n"
      "sli v15.16b, v6.16b, #4\n"
      "sxtl2 v26.4s, v25.8h\n"
      "ldr q23, [%[w], #432]\n"
      "mla v0.4s, v1.4s, v2.4s\n"
      "sli v15.16b, v11.16b, #6\n"
      "ldr q30, [%[w], #416]\n"
      "sxtl v21.8h, v31.8b\n"
      "and v14.16b, v3.16b, v9.16b\n"
      "shl v5.16b, v24.16b, #2\n"
      "and v7.16b, v3.16b, v29.16b\n"
      "ldur q29, [%[x], #148]\n"
      "sdot v4.4s, v7.16b, v12.4b[0]\n"
      "sdot v10.4s, v14.16b, v8.4b[1]\n"
      "sli v5.16b, v16.16b, #4\n"
      "sxtl v27.4s, v21.4h\n"
      "shl v25.16b, v23.16b, #2\n"
      "and v1.16b, v3.16b, v20.16b\n"
      "ldur q22, [%[w], #-16]\n"
      "sdot v10.4s, v1.16b, v8.4b[2]\n"
      "sli v5.16b, v30.16b, #6\n"
      "ldr q14, [%[w], #448]\n"
      "sxtl2 v9.4s, v21.8h\n"
      "sdot v10.4s, v18.16b, v8.4b[3]\n"
      "movi v7.4s, #0\n"
      "ldur q2, [%[x], #132]\n"
      "sli v25.16b, v14.16b, #4\n"
      "mla v0.4s, v10.4s, v17.4s\n"
      "ldr q20, [%[w], #464]\n"
      "and v1.16b, v3.16b, v6.16b\n"
      "ldr q21, [%[w], #480]\n"
      "sdot v4.4s, v1.16b, v12.4b[1]\n"
      "sli v25.16b, v20.16b, #6\n"
      "and v18.16b, v3.16b, v11.16b\n"
      "sdot v4.4s, v18.16b, v12.4b[2]\n"
      "ldr q10, [%[w], #496]\n"
      "and v17.16b, v3.16b, v24.16b\n"
      "ldr q6, [%[w], #512]\n"
      "sdot v4.4s, v15.16b, v12.4b[3]\n"
      "sdot v19.4s, v17.16b, v2.4b[0]\n"
      "shl v1.16b, v21.16b, #2\n"
      "and v18.16b, v3.16b, v16.16b\n"
      "ldr q16, [%[w], #560]\n"
      "mla v0.4s, v4.4s, v26.4s\n"
      "movi v24.4s, #0\n"
      "sli v1.16b, v10.16b, #4\n"
      "sdot v19.4s, v18.16b, v2.4b[1]\n"
      "ldur q12, [%[x], #196]\n"
      "and v15.16b, v3.16b, v23.16b\n"
      "ldr q4, [%[w], #528]\n"
      "sdot v7.4s, v15.16b, v29.4b[0]\n"
      "sli v1.16b, v6.16b, #6\n"
      "and v18.16b, v3.16b, v30.16b\n"
      "ldur q11, [%[x], #212]\n"
      "sdot v19.4s, v18.16b, v2.4b[2]\n"
      "and v26.16b, v3.16b, v14.16b\n"
      "sdot v7.4s, v26.16b, v29.4b[1]\n"
      "sdot v19.4s, v5.16b, v2.4b[3]\n"
      "ldr q23, [%[w], #544]\n"
      "ldr q15, [%[w], #576]\n"
      "sxtl2 v30.8h, v31.16b\n"
      "mla v0.4s, v19.4s, v27.4s\n"
      "shl v14.16b, v4.16b, #2\n"
      "and v26.16b, v3.16b, v21.16b\n"
      "sdot v24.4s, v26.16b, v13.4b[0]\n"
      "sli v14.16b, v23.16b, #4\n"
      "sxtl v2.4s, v30.4h\n"
      "and v5.16b, v3.16b, v20.16b\n"
      "ldr q18, [%[w], #624]\n"
      "sdot v7.4s, v5.16b, v29.4b[2]\n"
      "shl v31.16b, v15.16b, #2\n"
      "and v19.16b, v3.16b, v10.16b\n"
      "ldur q8, [%[x], #180]\n"
      "sdot v24.4s, v19.16b, v13.4b[1]\n"
      "sli v14.16b, v16.16b, #6\n"
      "sdot v7.4s, v25.16b, v29.4b[3]\n"
      "movi v17.4s, #0\n"
      "ldr q21, [%[w], #592]\n"
      "sxtl v26.8h, v22.8b\n"
      "and v20.16b, v3.16b, v4.16b\n"
      "and v5.16b, v3.16b, v6.16b\n"
      "and v29.16b, v3.16b, v15.16b\n"
      "sdot v24.4s, v5.16b, v13.4b[2]\n"
      "ldr q10, [%[w], #608]\n"
      "movi v27.4s, #0\n"
      "mla v0.4s, v7.4s, v9.4s\n"
      "sli v31.16b, v21.16b, #4\n"
      "sdot v24.4s, v1.16b, v13.4b[3]\n"
      "sdot v17.4s, v20.16b, v8.4b[0]\n"
      "sxtl2 v19.8h, v22.16b\n"
      "and v25.16b, v3.16b, v23.16b\n"
      "sdot v17.4s, v25.16b, v8.4b[1]\n"
      "mla v0.4s, v24.4s, v2.4s\n"
      "ldr q4, [%[w], #640]\n"
      "sxtl2 v6.4s, v30.8h\n"
      "ldr q20, [%[w], #672]\n"
      "sdot v27.4s, v29.16b, v12.4b[0]\n"
      "ldur q5, [%[x], #228]\n"
      "shl v7.16b, v18.16b, #2\n"
      "ldr q9, [%[w], #656]\n"
      "sxtl v1.4s, v26.4h\n"
      "and v13.16b, v3.16b, v16.16b\n"
      "and v22.16b, v3.16b, v21.16b\n"
      "ldr q23, [%[w], #720]\n"
      "sdot v17.4s, v13.16b, v8.4b[2]\n"
      "sdot v27.4s, v22.16b, v12.4b[1]\n"
      "movi v15.4s, #0\n"
      "movi v25.4s, #0\n"
      "sdot v17.4s, v14.16b, v8.4b[3]\n"
      "sli v7.16b, v4.16b, #4\n"
      "ldr q29, [%[w], #688]\n"
      "sxtl2 v24.4s, v26.8h\n"
      "shl v30.16b, v20.16b, #2\n"
      "and v2.16b, v3.16b, v10.16b\n"
      "sdot v27.4s, v2.16b, v12.4b[2]\n"
      "sli v31.16b, v10.16b, #6\n"
      "mla v0.4s, v17.4s, v6.4s\n"
      "ldur q16, [%[x], #244]\n"
      "shl v10.16b, v23.16b, #2\n"
      "sxtl v21.4s, v19.4h\n"
      "and v13.16b, v3.16b, v18.16b\n"
      "sdot v27.4s, v31.16b, v12.4b[3]\n"
      "sli v7.16b, v9.16b, #6\n"
      "ldr q8, [%[w], #704]\n"
      "sxtl2 v14.4s, v19.8h\n"
      "ldr q26, [%[w], #736]\n"
      "mla v0.4s, v27.4s, v1.4s\n"
      "sli v30.16b, v29.16b, #4\n"
      "ld1r {v1.4s}, [%[x]]\n"
      "sdot v15.4s, v13.16b, v11.4b[0]\n"
      "ldr q6, [%[w], #752]\n"
      "and v13.16b, v3.16b, v29.16b\n"
      "and v2.16b, v3.16b, v4.16b\n"
      "and v17.16b, v3.16b, v20.16b\n"
      "sdot v15.4s, v2.16b, v11.4b[1]\n"
      "sdot v25.4s, v17.16b, v5.4b[0]\n"
      "movi v22.4s, #0\n"
      "sli v30.16b, v8.16b, #6\n"
      "and v27.16b, v3.16b, v6.16b\n"
      "and v19.16b, v3.16b, v26.16b\n"
      "sli v10.16b, v26.16b, #4\n"
      "ldur d2, [%[w], #-72]\n"
      "add %[x], %[x], #292\n"
      "cmp %[x], %[end]\n"
      "add %[w], %[w], #840\n"
      "and v18.16b, v3.16b, v9.16b\n"
      "and v12.16b, v3.16b, v23.16b\n"
      "sdot v15.4s, v18.16b, v11.4b[2]\n"
      "sdot v25.4s, v13.16b, v5.4b[1]\n"
      "sdot v22.4s, v12.16b, v16.4b[0]\n"
      "sli v10.16b, v6.16b, #6\n"
      "sdot v15.4s, v7.16b, v11.4b[3]\n"
      "and v31.16b, v3.16b, v8.16b\n"
      "sdot v25.4s, v31.16b, v5.4b[2]\n"
      "sdot v22.4s, v19.16b, v16.4b[1]\n"
      "mla v0.4s, v15.4s, v24.4s\n"
      "sdot v25.4s, v30.16b, v5.4b[3]\n"
      "sdot v22.4s, v27.16b, v16.4b[2]\n"
      "mla v0.4s, v25.4s, v21.4s\n"
      "sdot v22.4s, v10.16b, v16.4b[3]\n"
      "mla v0.4s, v22.4s, v14.4s\n"
      "b.ne 1b\n"
      "fcvtl v4.4s, v2.4h\n"
      "scvtf v7.4s, v0.4s, #2\n"
      "fmul v12.4s, v1.4s, v4.4s\n"
      "fmul v16.4s, v12.4s, v7.4s\n"
      "fadd %[acc].4s, %[acc].4s, v16.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ6_K =
    arm::tile_kernel<Q6_KTile, arm::InOrderRow<Q6_KTile, q6_k_super_blocks_in_order>>(
        "matmul_f32_q8_k_q6_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
