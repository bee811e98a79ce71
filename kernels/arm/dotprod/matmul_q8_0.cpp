// matmul_f32_q8_0_q8_0_4x4_dotprod: Y = X * W^T with Q8_0 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: SDOT by element, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight block loaded once for 4 rows of X), decode and the m % 4 rows run
//   1 x 4 tiles, in one run() (arm/neon/block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_0_q8_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[j][4c + t] = code 4j + t of row c (arm/neon/packed.h).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/in_order.h"
#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/block_tile.h"

namespace kernels::dotprod {
namespace {

struct Q8_0 : arm::BlockType<gguf::GgmlType::Q8_0, ref::BlockQ8_0>, arm::RunsDot {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) src[c] = blocks[c] + sizeof(uint16_t);  // the codes, after d
    auto* qs = reinterpret_cast<uint8_t(*)[16]>(p.qs);
    arm::interleave_4x4_runs(src, 0, qs);
    arm::interleave_4x4_runs(src, 16, qs + 4);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16x4_t q03 = arm::load_x4<MR>(p.qs), q47 = arm::load_x4<MR>(p.qs + 64);
    return {{q03.val[0], q03.val[1], q03.val[2], q03.val[3], q47.val[0], q47.val[1], q47.val[2], q47.val[3]}};
  }
};

using Tile = arm::BlockTile<Q8_0>;

// The decode row of a group on an in-order core (run_in_order), made as Q4_0's
// (matmul_q4_0.cpp says how and why): two blocks an iteration, each in two
// SDOT chains of 4 joined by an ADD, single LDRs, software pipelined, in the
// order of bench/cycles/in_order/q8_0_dotprod.s (order_search.py --emit).
// Cortex-A55 model: 46 cycles a pair against the compiled loop's 128 (2.8x fewer);
// its 20 SDOT, FMUL and FADD issue alone and the other 40 instructions pair
// at best: no order takes fewer than 40. The results of run() bit for bit.
__attribute__((noinline)) float32x4_t pairs_in_order(const Q8_0::Packed* w, const neon::BlockQ8_0F* x, size_t pairs,
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
      "ldr q18, [%[x], #48]\n"
      "ldr q14, [%[w], #240]\n"
      "fcvtl v22.4s, v22.4h\n"
      "ldr q12, [%[w], #208]\n"
      "fcvtl v23.4s, v23.4h\n"
      "ldur q5, [%[w], #88]\n"
      "add v25.4s, v25.4s, v24.4s\n"
      "ldr q11, [%[w], #192]\n"
      "add v27.4s, v27.4s, v26.4s\n"
      "ldr q9, [%[w], #160]\n"
      "ldr q16, [%[x]]\n"
      "scvtf v25.4s, v25.4s\n"
      "ldr q10, [%[w], #176]\n"
      "fmul v23.4s, v23.4s, v21.s[0]\n"
      "ldur q0, [%[w], #8]\n"
      "movi d26, #0\n"
      "ldur q1, [%[w], #24]\n"
      "fmul v22.4s, v22.4s, v20.s[0]\n"
      "ldr q8, [%[w], #144]\n"
      "scvtf v27.4s, v27.4s\n"
      "ldr q19, [%[x], #64]\n"
      "ldr s21, [%[x], #80]\n"
      "fmul v25.4s, v22.4s, v25.4s\n"
      "ldur q6, [%[w], #104]\n"
      "ldr q17, [%[x], #16]\n"
      "fmul v27.4s, v23.4s, v27.4s\n"
      "movi d24, #0\n"
      "fadd %[acc].4s, %[acc].4s, v25.4s\n"
      "ldr s20, [%[x], #32]\n"
      "movi d25, #0\n"
      "ldur q4, [%[w], #72]\n"
      "ldur q3, [%[w], #56]\n"
      "fadd %[acc].4s, %[acc].4s, v27.4s\n"
      "movi d27, #0\n"
      "ldur q7, [%[w], #120]\n"
      "sdot v24.4s, v0.16b, v16.4b[0]\n"
      "ldr q13, [%[w], #224]\n"
      "sdot v25.4s, v4.16b, v17.4b[0]\n"
      "sdot v26.4s, v8.16b, v18.4b[0]\n"
      "sdot v27.4s, v12.16b, v19.4b[0]\n"
      "ldr q15, [%[w], #256]\n"
      "sdot v25.4s, v5.16b, v17.4b[1]\n"
      "sdot v24.4s, v1.16b, v16.4b[1]\n"
      "ldur q2, [%[w], #40]\n"
      "add %[x], %[x], #96\n"
      "sdot v27.4s, v13.16b, v19.4b[1]\n"
      "sdot v26.4s, v9.16b, v18.4b[1]\n"
      "sdot v24.4s, v2.16b, v16.4b[2]\n"
      "cmp %[x], %[end]\n"
      "ldr d23, [%[w], #136]\n"
      "sdot v25.4s, v6.16b, v17.4b[2]\n"
      "sdot v26.4s, v10.16b, v18.4b[2]\n"
      "sdot v27.4s, v14.16b, v19.4b[2]\n"
      "ldr d22, [%[w]]\n"
      "add %[w], %[w], #272\n"
      "sdot v24.4s, v3.16b, v16.4b[3]\n"
      "sdot v25.4s, v7.16b, v17.4b[3]\n"
      "sdot v26.4s, v11.16b, v18.4b[3]\n"
      "sdot v27.4s, v15.16b, v19.4b[3]\n"
      "b.ne 1b\n"
      "fcvtl v22.4s, v22.4h\n"
      "fcvtl v23.4s, v23.4h\n"
      "add v25.4s, v25.4s, v24.4s\n"
      "add v27.4s, v27.4s, v26.4s\n"
      "scvtf v25.4s, v25.4s\n"
      "fmul v23.4s, v23.4s, v21.s[0]\n"
      "fmul v22.4s, v22.4s, v20.s[0]\n"
      "scvtf v27.4s, v27.4s\n"
      "fmul v25.4s, v22.4s, v25.4s\n"
      "fmul v27.4s, v23.4s, v27.4s\n"
      "fadd %[acc].4s, %[acc].4s, v25.4s\n"
      "fadd %[acc].4s, %[acc].4s, v27.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 = arm::tile_kernel<Tile, arm::InOrderRow<Tile, pairs_in_order>>(
    "matmul_f32_q8_0_q8_0_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
