// matmul_f32_q8_0_q4_0_4x4_dotprod: Y = X * W^T with Q4_0 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: SHL / AND to unpack nibbles,
//   SDOT by element, SCVTF (fixed point), FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight block unpacked once for 4 rows of X), decode and the m % 4 rows run
//   1 x 4 tiles, in one run() (arm/neon/block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_0_q4_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[j][4c + t] = the GGUF byte qs[4j + t] of row c, XOR 0x88. That byte holds
// elements 4j + t (low nibble) and 16 + 4j + t (high nibble); the XOR turns
// each code q into the 4-bit two's complement of q - 8, so SHL #4 (low) and
// AND 0xF0 (high) give 16 * (q - 8) as int8 with no subtraction. SDOT then sums
// 16x the reference's integers, and SCVTF #4 divides by 16 exactly.
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/in_order.h"
#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/block_tile.h"

namespace kernels::dotprod {
namespace {

struct Q4_0 : arm::BlockType<gguf::GgmlType::Q4_0, ref::BlockQ4_0, 4>, arm::RunsDot {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) src[c] = reinterpret_cast<const ref::BlockQ4_0*>(blocks[c])->qs;
    arm::interleave_4x4_runs(src, 0, reinterpret_cast<uint8_t(*)[16]>(p.qs), 0x88);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16_t high_nibble = vdupq_n_s8(static_cast<int8_t>(0xF0));
    const int8x16x4_t v = arm::load_x4<MR>(p.qs);
    Codes w;  // 16 * (q - 8)
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; ++j) {
      w.v[j] = vshlq_n_s8(v.val[j], 4);
      w.v[4 + j] = vandq_s8(v.val[j], high_nibble);
    }
    return w;
  }
};

using Tile = arm::BlockTile<Q4_0>;

// The decode row of a group on an in-order core (run_in_order). An in-order
// core issues instructions as written, two a cycle at best, and waits on any
// result not ready: the compiled loop (BlockTile's, two blocks an iteration,
// one SDOT chain of 8 a block, LD1 of four registers) takes 122 cycles a pair
// of blocks on LLVM's Cortex-A55 model, 1.6x the 75 its instructions need
// with no wait. This loop differs in three ways:
// - four SDOT chains of 4 (the low and high nibbles of each block, the high
//   ones by SSHR #4: the codes themselves, q - 8, where AND 0xF0 gave
//   16 (q - 8) and issues alone on the A55), joined by one SSRA (low >> 4: the
//   low sums are exact multiples of 16);
// - single LDRs (one cycle each on the A55's load port, where LD1 of four
//   registers takes eight), MOVI of a D register to clear (half a cycle);
// - software pipelined: each iteration scales and adds the previous pair
//   while it loads and multiplies the next, in the order that
//   bench/cycles/order_search.py found over the Cortex-A55 model
//   (bench/cycles/in_order/q4_0_dotprod.s; the lines below are its --emit).
// Cortex-A55 model: 47 cycles a pair, 2.6x fewer; what limits it is issue:
// its 20 SDOT, FMUL and FADD each issue alone in a cycle, and the other 48
// instructions pair at best, so no order takes fewer than 44 (with
// no wait on a result, this order takes 47: docs/cycles.md's port bound for
// the in-order cores). On the out-of-order cores it is 5-12% slower than the
// compiled loop (Neoverse V2 12.5 cycles a pair against 11.7, N1 26.1 against
// 23.2: SSRA and the single loads are more micro-ops), so it runs only on
// in-order cores. The sums are the reference's integers, the scaling and the
// adds the reference's, in its order: the results of run() bit for bit.
__attribute__((noinline)) float32x4_t pairs_in_order(const Q4_0::Packed* w, const neon::BlockQ8_0F* x, size_t pairs,
                                                     float32x4_t acc) {
  const neon::BlockQ8_0F* end = x + 2 * pairs;
  asm volatile(
      "movi d20, #0\n"
      "movi d21, #0\n"
      "movi d22, #0\n"
      "movi d23, #0\n"
      "movi d24, #0\n"
      "movi d25, #0\n"
      "movi d26, #0\n"
      "movi d27, #0\n"
      "1:\n"
      "ldr q6, [%[w], #112]\n"
      "fcvtl v22.4s, v22.4h\n"
      "ldr q18, [%[x], #48]\n"
      "fcvtl v23.4s, v23.4h\n"
      "ssra v25.4s, v24.4s, #4\n"
      "ldur q3, [%[w], #56]\n"
      "ssra v27.4s, v26.4s, #4\n"
      "ldur q0, [%[w], #8]\n"
      "ldr q7, [%[w], #128]\n"
      "movi d24, #0\n"
      "ldr q16, [%[x]]\n"
      "fmul v23.4s, v23.4s, v21.s[0]\n"
      "ldr q4, [%[w], #80]\n"
      "scvtf v25.4s, v25.4s\n"
      "scvtf v27.4s, v27.4s\n"
      "fmul v22.4s, v22.4s, v20.s[0]\n"
      "ldur q2, [%[w], #40]\n"
      "shl v14.16b, v6.16b, #4\n"
      "ldur q1, [%[w], #24]\n"
      "shl v12.16b, v4.16b, #4\n"
      "shl v8.16b, v0.16b, #4\n"
      "fmul v25.4s, v22.4s, v25.4s\n"
      "movi d26, #0\n"
      "sdot v24.4s, v8.16b, v16.4b[0]\n"
      "fmul v27.4s, v23.4s, v27.4s\n"
      "ldr s20, [%[x], #32]\n"
      "shl v15.16b, v7.16b, #4\n"
      "ldr q17, [%[x], #16]\n"
      "shl v10.16b, v2.16b, #4\n"
      "sshr v0.16b, v0.16b, #4\n"
      "fadd %[acc].4s, %[acc].4s, v25.4s\n"
      "movi d25, #0\n"
      "sdot v26.4s, v12.16b, v18.4b[0]\n"
      "ldr q5, [%[w], #96]\n"
      "shl v9.16b, v1.16b, #4\n"
      "sshr v4.16b, v4.16b, #4\n"
      "fadd %[acc].4s, %[acc].4s, v27.4s\n"
      "ldr q19, [%[x], #64]\n"
      "shl v13.16b, v5.16b, #4\n"
      "shl v11.16b, v3.16b, #4\n"
      "sdot v25.4s, v0.16b, v17.4b[0]\n"
      "movi d27, #0\n"
      "sdot v26.4s, v13.16b, v18.4b[1]\n"
      "ldr s21, [%[x], #80]\n"
      "add %[x], %[x], #96\n"
      "sshr v6.16b, v6.16b, #4\n"
      "sshr v2.16b, v2.16b, #4\n"
      "sshr v1.16b, v1.16b, #4\n"
      "sshr v5.16b, v5.16b, #4\n"
      "sdot v27.4s, v4.16b, v19.4b[0]\n"
      "sdot v24.4s, v9.16b, v16.4b[1]\n"
      "sdot v25.4s, v1.16b, v17.4b[1]\n"
      "ldr d23, [%[w], #72]\n"
      "cmp %[x], %[end]\n"
      "sdot v27.4s, v5.16b, v19.4b[1]\n"
      "sdot v24.4s, v10.16b, v16.4b[2]\n"
      "sdot v25.4s, v2.16b, v17.4b[2]\n"
      "sdot v26.4s, v14.16b, v18.4b[2]\n"
      "ldr d22, [%[w]]\n"
      "add %[w], %[w], #144\n"
      "sshr v3.16b, v3.16b, #4\n"
      "sshr v7.16b, v7.16b, #4\n"
      "sdot v27.4s, v6.16b, v19.4b[2]\n"
      "sdot v24.4s, v11.16b, v16.4b[3]\n"
      "sdot v26.4s, v15.16b, v18.4b[3]\n"
      "sdot v25.4s, v3.16b, v17.4b[3]\n"
      "sdot v27.4s, v7.16b, v19.4b[3]\n"
      "b.ne 1b\n"
      "fcvtl v22.4s, v22.4h\n"
      "fcvtl v23.4s, v23.4h\n"
      "ssra v25.4s, v24.4s, #4\n"
      "ssra v27.4s, v26.4s, #4\n"
      "fmul v23.4s, v23.4s, v21.s[0]\n"
      "scvtf v25.4s, v25.4s\n"
      "scvtf v27.4s, v27.4s\n"
      "fmul v22.4s, v22.4s, v20.s[0]\n"
      "fmul v25.4s, v22.4s, v25.4s\n"
      "fmul v27.4s, v23.4s, v27.4s\n"
      "fadd %[acc].4s, %[acc].4s, v25.4s\n"
      "fadd %[acc].4s, %[acc].4s, v27.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 = arm::tile_kernel<Tile, arm::InOrderRow<Tile, pairs_in_order>>(
    "matmul_f32_q8_0_q4_0_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
