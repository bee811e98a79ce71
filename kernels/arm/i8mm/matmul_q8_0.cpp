// matmul_f32_q8_0_q8_0_8x4_i8mm: Q8_0 weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 136 = 4 x 34 bytes (no growth), kChunks = 4:
//   uint16 d[4]                    fp16 scales of rows 0..3
//   int8   qs[pair q][chunk c][16] row 2q codes 8c..8c+7, then row 2q+1's
// Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h).
//
// run: block_tiles.h: 8 activation rows x 4 weight rows, 32 SMMLA per block;
// 2x4 form for the rows left over, and a last single row (decode) on 8 tiles
// at once. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/in_order.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct Q8_0 : arm::WeightType<gguf::GgmlType::Q8_0, ref::BlockQ8_0> {
  static constexpr size_t kChunks = 4;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t c = 0; c < 4; ++c) std::memcpy(row0 + 16 * c, blk.qs + 8 * c, 8);
  }

  static TileWeights load(const uint8_t* p) {
    TileWeights r;
    r.d = load_f16x4(p);
    const int8x16x4_t q0 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p + 8));
    const int8x16x4_t q1 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p + 72));
    for (int c = 0; c < 4; ++c) {
      r.w[0][c] = q0.val[c];
      r.w[1][c] = q1.val[c];
    }
    return r;
  }

  // load(p) with post-indexed loads (p += 136). The empty asm keeps GCC 12
  // from folding the two p += 64 into one ADD on a copy of p (2 more
  // instructions per tile and block, objdump).
  static TileWeights load_next(const uint8_t*& p) {
    TileWeights r;
    r.d = load_f16x4_post(p);
    const int8x16x4_t q0 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p));
    p += 64;
    asm("" : "+r"(p));
    const int8x16x4_t q1 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p));
    p += 64;
    for (int c = 0; c < 4; ++c) {
      r.w[0][c] = q0.val[c];
      r.w[1][c] = q1.val[c];
    }
    return r;
  }
};

// The decode row of a tile on an in-order core (q8_0_row_in_order), two
// blocks an iteration, as matmul_q4_0.cpp's with no nibbles to unpack
// (bench/cycles/in_order/q8_0_i8mm.s, ordered by order_search.py --cpu
// cortex-a510). Cortex-A510 model: 0.178 cycles a weight (45 a pair of
// blocks), 1.9x fewer than the compiled row's 0.336, 1.05x its port bound in
// this order; on the out-of-order cores 20-36% slower, so in-order cores only.
// The results of q8_0_row_tiles bit for bit.
__attribute__((noinline)) float32x4_t pairs_in_order(const uint8_t* w, const uint8_t* x, size_t pairs,
                                                     float32x4_t acc) {
  static_assert(kTileBlockBytes<Q8_0> == 136 && kLhsBlockBytes<Q8_0> == 80 && kLhsCodesOffset<Q8_0> == 16);
  const uint8_t* end = x + 2 * pairs * kLhsBlockBytes<Q8_0>;
  asm volatile(
      "movi d20, #0\n"
      "movi d21, #0\n"
      "movi d22, #0\n"
      "movi d23, #0\n"
      "movi d24, #0\n"
      "movi d25, #0\n"
      "1:\n"
      "ldr q10, [%[x], #48]\n"
      "ldr q8, [%[x], #16]\n"
      "movi d16, #0\n"
      "ldr q9, [%[x], #32]\n"
      "ldur q0, [%[w], #8]\n"
      "ldur q2, [%[w], #40]\n"
      "ldr q29, [%[w], #208]\n"
      "fcvtl v23.4s, v23.4h\n"
      "movi d17, #0\n"
      "smmla v16.4s, v8.16b, v0.16b\n"
      "scvtf v20.4s, v20.4s\n"
      "ext v12.16b, v8.16b, v8.16b, #8\n"
      "ldr q11, [%[x], #64]\n"
      "ldr q0, [%[w], #240]\n"
      "ldur q4, [%[w], #72]\n"
      "ldur q6, [%[w], #104]\n"
      "ldr q18, [%[w], #144]\n"
      "ldur q1, [%[w], #24]\n"
      "fcvtl v22.4s, v22.4h\n"
      "smmla v16.4s, v12.16b, v4.16b\n"
      "ext v14.16b, v10.16b, v10.16b, #8\n"
      "ldr q30, [%[w], #224]\n"
      "ldr q27, [%[w], #192]\n"
      "ldur q5, [%[w], #88]\n"
      "ext v15.16b, v11.16b, v11.16b, #8\n"
      "ext v13.16b, v9.16b, v9.16b, #8\n"
      "smmla v16.4s, v10.16b, v2.16b\n"
      "smmla v17.4s, v9.16b, v1.16b\n"
      "ldr q4, [%[x], #96]\n"
      "ldr q12, [%[x], #112]\n"
      "fmul v22.4s, v22.4s, v24.s[0]\n"
      "ldr q19, [%[w], #160]\n"
      "smmla v17.4s, v13.16b, v5.16b\n"
      "smmla v16.4s, v14.16b, v6.16b\n"
      "movi d13, #0\n"
      "fmul v23.4s, v23.4s, v25.s[0]\n"
      "movi d5, #0\n"
      "ldr q2, [%[x], #128]\n"
      "ext v6.16b, v4.16b, v4.16b, #8\n"
      "scvtf v21.4s, v21.4s\n"
      "ext v14.16b, v12.16b, v12.16b, #8\n"
      "smmla v13.4s, v4.16b, v18.16b\n"
      "fmla %[acc].4s, v20.4s, v22.4s\n"
      "ldr q10, [%[x], #144]\n"
      "ldr q26, [%[w], #176]\n"
      "ldur q3, [%[w], #56]\n"
      "smmla v5.4s, v12.16b, v19.16b\n"
      "smmla v13.4s, v6.16b, v29.16b\n"
      "fmla %[acc].4s, v21.4s, v23.4s\n"
      "ext v1.16b, v2.16b, v2.16b, #8\n"
      "ldr s24, [%[x], #0]\n"
      "ldr d22, [%[w], #0]\n"
      "smmla v17.4s, v11.16b, v3.16b\n"
      "ext v9.16b, v10.16b, v10.16b, #8\n"
      "smmla v5.4s, v14.16b, v30.16b\n"
      "ldur q7, [%[w], #120]\n"
      "smmla v13.4s, v2.16b, v26.16b\n"
      "ldr q8, [%[w], #256]\n"
      "smmla v5.4s, v10.16b, v27.16b\n"
      "smmla v17.4s, v15.16b, v7.16b\n"
      "smmla v13.4s, v1.16b, v0.16b\n"
      "add v20.4s, v16.4s, v17.4s\n"
      "smmla v5.4s, v9.16b, v8.16b\n"
      "ldr s25, [%[x], #80]\n"
      "ldr d23, [%[w], #136]\n"
      "add %[x], %[x], #160\n"
      "cmp %[x], %[end]\n"
      "add v21.4s, v13.4s, v5.4s\n"
      "add %[w], %[w], #272\n"
      "b.ne 1b\n"
      "fcvtl v23.4s, v23.4h\n"
      "scvtf v20.4s, v20.4s\n"
      "fcvtl v22.4s, v22.4h\n"
      "fmul v22.4s, v22.4s, v24.s[0]\n"
      "fmul v23.4s, v23.4s, v25.s[0]\n"
      "scvtf v21.4s, v21.4s\n"
      "fmla %[acc].4s, v20.4s, v22.4s\n"
      "fmla %[acc].4s, v21.4s, v23.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 = arm::interleaved_kernel<InOrderBlockTiles<Q8_0, pairs_in_order>>(
    "matmul_f32_q8_0_q8_0_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
