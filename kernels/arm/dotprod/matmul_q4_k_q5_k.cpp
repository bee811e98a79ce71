// matmul_f32_q8_k_q4_k_4x4_dotprod and matmul_f32_q8_k_q5_k_4x4_dotprod:
// Y = X * W^T with Q4_K or Q5_K weights (kernels/matmul.h), one decode struct
// for both.
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR to unpack nibbles
//   (Q5_K: CMTST of the fifth bits, then BSL / SRI), SDOT by element, MLA by
//   the sub-block scales, SMLAL by lane for the mins (and Q5_K's offset),
//   SCVTF, FMUL / FSUB / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run() (arm/neon/super_block_tile.h); any m and
//   n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q4_k_1x1_ref / _q5_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c], dmin[c]   fp16 of the 4 rows
//   scales[3][16]   the 6-bit scales and mins, unpacked from the GGUF 12-byte
//                   form and bit-packed (arm/neon/packed.h pack_six_bit) as four
//                   vectors u0 = sc of sub-blocks 0-3, u1 = sc 4-7, u2 = m 0-3,
//                   u3 = m 4-7, byte 4s + c = sub-block s of row c
//   qh[q][r][16]    Q5_K only: the inverted fifth bits of quarter q (sub-blocks
//                   2q, 2q + 1, arm/neon/k_quants.h): byte 4c + t of plane r,
//                   bit 2j' + h: element 4j + t (j = 4r + j') of sub-block
//                   2q + h of row c, the order of the codes' runs below
//   qs[p][16j+4c+t] the GGUF byte qs[32p + 4j + t] of row c: element 4j + t of
//                   sub-block 2p (low nibble) and of sub-block 2p + 1 (high)
// Q5_K's codes are decoded as q - 16 (SDOT would take 0..31 as well; the
// offset keeps one decoding and one layout rule for both tiers).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <array>
#include <cstddef>

#include "kernels/arm/in_order.h"
#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

// Where Q5_K's fifth bits go in the planes (k_quants.h): plane, byte, bit.
struct FifthBitPlace {
  std::array<size_t, 3> operator()(size_t c, size_t h, size_t l) const {
    return {l / 16, 4 * c + l % 4, 2 * (l / 4 % 4) + h};
  }
};

// The codes of Q4_K (kQ5 false), nibbles 0..15, and of Q5_K, q - 16 with
// the fifth bits of the qh planes (k_quants.h).
template <bool kQ5>
struct OffsetK : arm::OffsetKType<kQ5, FifthBitPlace> {
  using Base = arm::OffsetKType<kQ5, FifthBitPlace>;
  using typename Base::Block;
  using typename Base::Packed;

  static void pack(const uint8_t* const* blocks, Packed& p) {
    const Block* blk[arm::kTileN];
    Base::pack_fields(blocks, blk, p);
    const uint8_t* src[arm::kTileN] = {blk[0]->qs, blk[1]->qs, blk[2]->qs, blk[3]->qs};
    for (size_t q = 0; q < 4; ++q) {
      auto* runs = reinterpret_cast<uint8_t(*)[16]>(p.qs[q]);
      arm::interleave_4x4_runs(src, 32 * q, runs);
      arm::interleave_4x4_runs(src, 32 * q + 16, runs + 4);
    }
  }

  // Sub-blocks 2q (low nibbles) and 2q + 1 (high).
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t q, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const arm::SubBlockPairScales scales = arm::q4_k_pair_scales(p.scales, q);
    const typename Base::Planes planes = Base::planes(p, q);
#pragma GCC unroll 2
    for (size_t half = 0; half < 2; ++half) {
      // Loaded again for the high nibbles: keeping them would hold 8 more
      // registers through the 4-row tile.
      int8x16_t v[8];
#pragma GCC unroll 8
      for (size_t j = 0; j < 8; ++j) {
        const uint8x16_t raw = vld1q_u8(p.qs[q] + 16 * j);
        const auto bit = static_cast<unsigned>(2 * (j % 4) + half);
        v[j] = half == 0 ? Base::template codes<0>(raw, planes, j / 4, bit)
                         : Base::template codes<1>(raw, planes, j / 4, bit);
      }
      const size_t s = 2 * q + half;
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub = arm::sdot_runs32(v, vld1q_s8(xb[i]->qs + 32 * s), vld1q_s8(xb[i]->qs + 32 * s + 16));
        isum[i] = vmlaq_s32(isum[i], sub, half == 0 ? scales.even : scales.odd);
      }
    }
  }
};
using Q4_K = OffsetK<false>;
using Q5_K = OffsetK<true>;
using Q4_KTile = arm::SuperBlockTile<Q4_K>;

// The decode row of a Q4_K group on an in-order core (run_in_order), one
// super-block an iteration. The compiled loop (SuperBlockTile's) takes 0.528
// cycles a weight on LLVM's Cortex-A55 model, 1.64x what its instructions
// need in their order: it waits on its one SDOT chain a sub-block and on LD1
// of four registers (eight cycles on the A55's load port). This loop
// (bench/cycles/in_order/q4_k_dotprod.s, from bench/cycles/order_search.py):
// - single LDRs; four SDOT chains a quarter (sub-blocks 2q and 2q + 1, odd
//   and even runs apart: the A55 model forwards no accumulator, so a chain
//   waits four cycles between SDOTs), added and multiplied by the sub-block
//   scales with one MUL / MLA each;
// - units of 64 codes in runs of one kind (AND, then LDR paired with USHR,
//   then SDOT): the model issues an SDOT, AND or other Q-register operation
//   alone and retires in order, so a short operation after a long one waits;
// - the mins' dot by SMULL / SMLAL by lane of the bsums, the 6-bit scales and
//   mins unpacked as q4_k_mins does (USHR, SLI, SHL / USHR for the AND);
// - software pipelined: the float work of a super-block (FCVTL, SCVTF, FMUL,
//   FSUB, FADD in the reference's order) runs in the next iteration.
// Cortex-A55 model: 0.249 cycles a weight (245 a super-block of the group),
// 2.1x fewer, 1.06x its port bound in this order (docs/cycles.md): what
// limits it is issue, 137 of its 264 instructions issuing alone. On the
// out-of-order cores it is 1-6% slower than the compiled loop (more
// micro-ops), so it runs only on in-order cores. The sums are the
// reference's integers, the scaling and the adds the reference's, in its
// order: the results of run() bit for bit (InOrderSchedule, TierMatmul).
__attribute__((noinline)) float32x4_t super_blocks_in_order(const Q4_K::Packed* w, const ref::BlockQ8_K* x,
                                                            size_t count, float32x4_t acc) {
  // The offsets the loop's lines use.
  static_assert(sizeof(Q4_K::Packed) == 576 && offsetof(Q4_K::Packed, scales) == 16 && offsetof(Q4_K::Packed, qs) == 64);
  static_assert(sizeof(ref::BlockQ8_K) == 292 && offsetof(ref::BlockQ8_K, qs) == 4 &&
                offsetof(ref::BlockQ8_K, bsums) == 260);
  const ref::BlockQ8_K* end = x + count;
  asm volatile(
      "movi d0, #0\n"
      "movi d1, #0\n"
      "movi d20, #0\n"
      "movi d21, #0\n"
      "movi d24, #0\n"
      "movi d25, #0\n"
      "movi d26, #0\n"
      "1:\n"
      "fcvtl v0.4s, v21.4h\n"
      "fcvtl2 v1.4s, v21.8h\n"
      "scvtf v26.4s, v26.4s\n"
      "fmul v1.4s, v1.4s, v20.s[0]\n"
      "ldr q3, [%[w], #32]\n"
      "movi v31.16b, #0x0f\n"
      "fmul v0.4s, v0.4s, v20.s[0]\n"
      "ldur q23, [%[x], #36]\n"
      "ldr q4, [%[w], #48]\n"
      "add v24.4s, v24.4s, v25.4s\n"
      "fmul v1.4s, v1.4s, v26.4s\n"
      "ldr q2, [%[w], #16]\n"
      "add x9, %[x], #260\n"
      "ldr q5, [x9]\n"
      "ushr v9.16b, v4.16b, #2\n"
      "ushr v7.16b, v2.16b, #2\n"
      "sli v2.16b, v3.16b, #2\n"
      "ldr q18, [%[w], #96]\n"
      "ldr q6, [x9, #16]\n"
      "sli v2.16b, v4.16b, #4\n"
      "shl v10.16b, v2.16b, #2\n"
      "ldr q17, [%[w], #80]\n"
      "ushr v10.16b, v10.16b, #2\n"
      "ldr q4, [%[w], #144]\n"
      "ushll2 v13.8h, v9.16b, #0\n"
      "scvtf v24.4s, v24.4s\n"
      "addp v11.8h, v5.8h, v6.8h\n"
      "ushll v12.8h, v9.8b, #0\n"
      "ushll v14.8h, v10.8b, #0\n"
      "ldr q19, [%[w], #112]\n"
      "smull v26.4s, v12.4h, v11.h[0]\n"
      "fmul v0.4s, v0.4s, v24.4s\n"
      "ldr q16, [%[w], #64]\n"
      "smlal2 v26.4s, v12.8h, v11.h[1]\n"
      "smlal v26.4s, v13.4h, v11.h[2]\n"
      "fsub v0.4s, v0.4s, v1.4s\n"
      "ushr v8.16b, v3.16b, #2\n"
      "ushr v2.16b, v17.16b, #4\n"
      "smlal2 v26.4s, v13.8h, v11.h[3]\n"
      "and v30.16b, v18.16b, v31.16b\n"
      "ldur q22, [%[x], #4]\n"
      "smlal v26.4s, v14.4h, v11.h[4]\n"
      "ushll2 v15.8h, v10.16b, #0\n"
      "and v27.16b, v16.16b, v31.16b\n"
      "smlal2 v26.4s, v14.8h, v11.h[5]\n"
      "ushr v5.16b, v18.16b, #4\n"
      "ldr q6, [%[w], #160]\n"
      "smlal v26.4s, v15.4h, v11.h[6]\n"
      "movi d14, #0\n"
      "ldur q12, [%[x], #20]\n"
      "ushr v3.16b, v16.16b, #4\n"
      "smlal2 v26.4s, v15.8h, v11.h[7]\n"
      "fadd %[acc].4s, %[acc].4s, v0.4s\n"
      "and v29.16b, v17.16b, v31.16b\n"
      "and v1.16b, v19.16b, v31.16b\n"
      "ldr q9, [%[w], #176]\n"
      "ushr v10.16b, v19.16b, #4\n"
      "ldur q13, [%[x], #52]\n"
      "movi d11, #0\n"
      "movi d15, #0\n"
      "movi d16, #0\n"
      "sdot v14.4s, v27.16b, v22.4b[0]\n"
      "ldr q0, [%[w], #128]\n"
      "sdot v15.4s, v3.16b, v23.4b[0]\n"
      "sdot v11.4s, v29.16b, v22.4b[1]\n"
      "sdot v16.4s, v2.16b, v23.4b[1]\n"
      "sdot v14.4s, v30.16b, v22.4b[2]\n"
      "sdot v15.4s, v5.16b, v23.4b[2]\n"
      "sdot v11.4s, v1.16b, v22.4b[3]\n"
      "sdot v16.4s, v10.16b, v23.4b[3]\n"
      "ldr q1, [%[w], #240]\n"
      "ushr v29.16b, v0.16b, #4\n"
      "and v18.16b, v4.16b, v31.16b\n"
      "ldur q10, [%[x], #68]\n"
      "and v17.16b, v0.16b, v31.16b\n"
      "and v19.16b, v6.16b, v31.16b\n"
      "ldr q2, [%[w], #208]\n"
      "ushr v23.16b, v9.16b, #4\n"
      "and v27.16b, v9.16b, v31.16b\n"
      "ushr v30.16b, v4.16b, #4\n"
      "ushr v22.16b, v6.16b, #4\n"
      "ldur q0, [%[x], #100]\n"
      "sdot v14.4s, v17.16b, v12.4b[0]\n"
      "sdot v15.4s, v29.16b, v13.4b[0]\n"
      "sdot v16.4s, v30.16b, v13.4b[1]\n"
      "sdot v11.4s, v18.16b, v12.4b[1]\n"
      "sdot v14.4s, v19.16b, v12.4b[2]\n"
      "sdot v15.4s, v22.16b, v13.4b[2]\n"
      "ldr q3, [%[w], #192]\n"
      "ushll v4.8h, v7.8b, #0\n"
      "sdot v11.4s, v27.16b, v12.4b[3]\n"
      "sdot v16.4s, v23.16b, v13.4b[3]\n"
      "ldr q5, [%[w], #224]\n"
      "ushll v6.4s, v4.4h, #0\n"
      "ushll2 v9.4s, v4.8h, #0\n"
      "ldr q4, [%[w], #304]\n"
      "add v14.4s, v14.4s, v11.4s\n"
      "ldr q12, [%[w], #272]\n"
      "add v15.4s, v15.4s, v16.4s\n"
      "and v18.16b, v5.16b, v31.16b\n"
      "mul v25.4s, v15.4s, v9.4s\n"
      "mul v24.4s, v14.4s, v6.4s\n"
      "ldur q6, [%[x], #116]\n"
      "and v17.16b, v3.16b, v31.16b\n"
      "ushr v27.16b, v2.16b, #4\n"
      "and v29.16b, v2.16b, v31.16b\n"
      "and v30.16b, v1.16b, v31.16b\n"
      "ldr q19, [%[w], #256]\n"
      "ushr v13.16b, v5.16b, #4\n"
      "ushr v22.16b, v3.16b, #4\n"
      "ushr v11.16b, v1.16b, #4\n"
      "ldr q23, [%[w], #288]\n"
      "movi d14, #0\n"
      "movi d15, #0\n"
      "movi d9, #0\n"
      "movi d3, #0\n"
      "sdot v14.4s, v17.16b, v10.4b[0]\n"
      "sdot v9.4s, v22.16b, v0.4b[0]\n"
      "sdot v15.4s, v29.16b, v10.4b[1]\n"
      "sdot v3.4s, v27.16b, v0.4b[1]\n"
      "sdot v14.4s, v18.16b, v10.4b[2]\n"
      "sdot v9.4s, v13.16b, v0.4b[2]\n"
      "sdot v15.4s, v30.16b, v10.4b[3]\n"
      "sdot v3.4s, v11.16b, v0.4b[3]\n"
      "and v2.16b, v19.16b, v31.16b\n"
      "and v5.16b, v12.16b, v31.16b\n"
      "ldur q16, [%[x], #84]\n"
      "and v17.16b, v4.16b, v31.16b\n"
      "ldr q27, [%[w], #336]\n"
      "ldur q0, [%[x], #132]\n"
      "ushr v18.16b, v12.16b, #4\n"
      "ushr v30.16b, v23.16b, #4\n"
      "and v1.16b, v23.16b, v31.16b\n"
      "ushr v11.16b, v4.16b, #4\n"
      "ushr v29.16b, v19.16b, #4\n"
      "ldur q19, [%[x], #164]\n"
      "sdot v14.4s, v2.16b, v16.4b[0]\n"
      "sdot v9.4s, v29.16b, v6.4b[0]\n"
      "sdot v15.4s, v5.16b, v16.4b[1]\n"
      "sdot v3.4s, v18.16b, v6.4b[1]\n"
      "sdot v14.4s, v1.16b, v16.4b[2]\n"
      "sdot v9.4s, v30.16b, v6.4b[2]\n"
      "sdot v15.4s, v17.16b, v16.4b[3]\n"
      "sdot v3.4s, v11.16b, v6.4b[3]\n"
      "ldr s20, [%[x]]\n"
      "ushll2 v12.8h, v7.16b, #0\n"
      "and v29.16b, v27.16b, v31.16b\n"
      "ldr q22, [%[w], #320]\n"
      "ushll v23.4s, v12.4h, #0\n"
      "ldr q10, [%[w], #368]\n"
      "ushll2 v4.4s, v12.8h, #0\n"
      "add v14.4s, v14.4s, v15.4s\n"
      "ldr q13, [%[w], #352]\n"
      "add v9.4s, v9.4s, v3.4s\n"
      "mla v24.4s, v14.4s, v23.4s\n"
      "mla v25.4s, v9.4s, v4.4s\n"
      "ushr v16.16b, v27.16b, #4\n"
      "ushr v6.16b, v13.16b, #4\n"
      "and v2.16b, v22.16b, v31.16b\n"
      "and v18.16b, v10.16b, v31.16b\n"
      "ldr q1, [%[w], #384]\n"
      "ushr v30.16b, v22.16b, #4\n"
      "ldr q11, [%[w], #416]\n"
      "ldr q7, [%[w], #432]\n"
      "ushr v12.16b, v10.16b, #4\n"
      "ldur q15, [%[x], #148]\n"
      "ldur q3, [%[x], #180]\n"
      "movi d23, #0\n"
      "movi d14, #0\n"
      "movi d9, #0\n"
      "ldr q17, [%[w], #400]\n"
      "and v5.16b, v13.16b, v31.16b\n"
      "movi d4, #0\n"
      "sdot v23.4s, v2.16b, v0.4b[0]\n"
      "sdot v9.4s, v30.16b, v19.4b[0]\n"
      "sdot v14.4s, v29.16b, v0.4b[1]\n"
      "sdot v4.4s, v16.16b, v19.4b[1]\n"
      "sdot v23.4s, v5.16b, v0.4b[2]\n"
      "sdot v9.4s, v6.16b, v19.4b[2]\n"
      "sdot v14.4s, v18.16b, v0.4b[3]\n"
      "sdot v4.4s, v12.16b, v19.4b[3]\n"
      "and v22.16b, v1.16b, v31.16b\n"
      "and v27.16b, v17.16b, v31.16b\n"
      "and v10.16b, v7.16b, v31.16b\n"
      "and v13.16b, v11.16b, v31.16b\n"
      "ldr q2, [%[w], #448]\n"
      "ushr v30.16b, v1.16b, #4\n"
      "ldr q29, [%[w], #464]\n"
      "ushr v16.16b, v17.16b, #4\n"
      "ldr q5, [%[w], #480]\n"
      "ushr v6.16b, v11.16b, #4\n"
      "sdot v23.4s, v22.16b, v15.4b[0]\n"
      "sdot v9.4s, v30.16b, v3.4b[0]\n"
      "sdot v14.4s, v27.16b, v15.4b[1]\n"
      "sdot v4.4s, v16.16b, v3.4b[1]\n"
      "sdot v23.4s, v13.16b, v15.4b[2]\n"
      "ldur q19, [%[x], #196]\n"
      "ushll v1.8h, v8.8b, #0\n"
      "ushr v0.16b, v7.16b, #4\n"
      "and v22.16b, v29.16b, v31.16b\n"
      "ldr q18, [%[w], #496]\n"
      "sdot v14.4s, v10.16b, v15.4b[3]\n"
      "sdot v4.4s, v0.16b, v3.4b[3]\n"
      "sdot v9.4s, v6.16b, v3.4b[2]\n"
      "ldr q16, [%[w], #512]\n"
      "add v23.4s, v23.4s, v14.4s\n"
      "ushll v17.4s, v1.4h, #0\n"
      "ushll2 v11.4s, v1.8h, #0\n"
      "ldur q12, [%[x], #228]\n"
      "ushr v1.16b, v18.16b, #4\n"
      "add v9.4s, v9.4s, v4.4s\n"
      "and v30.16b, v5.16b, v31.16b\n"
      "ldur q14, [%[x], #212]\n"
      "mla v24.4s, v23.4s, v17.4s\n"
      "mla v25.4s, v9.4s, v11.4s\n"
      "ldur q4, [%[x], #244]\n"
      "movi d9, #0\n"
      "ldr q3, [%[w], #560]\n"
      "ushr v13.16b, v2.16b, #4\n"
      "ldr q6, [%[w], #528]\n"
      "ushr v0.16b, v5.16b, #4\n"
      "ushr v15.16b, v29.16b, #4\n"
      "and v7.16b, v2.16b, v31.16b\n"
      "movi d23, #0\n"
      "ldr q10, [%[w], #544]\n"
      "movi d17, #0\n"
      "sdot v9.4s, v13.16b, v12.4b[0]\n"
      "sdot v23.4s, v7.16b, v19.4b[0]\n"
      "movi d11, #0\n"
      "sdot v17.4s, v22.16b, v19.4b[1]\n"
      "ushr v13.16b, v6.16b, #4\n"
      "and v27.16b, v18.16b, v31.16b\n"
      "ushr v7.16b, v16.16b, #4\n"
      "sdot v11.4s, v15.16b, v12.4b[1]\n"
      "sdot v23.4s, v30.16b, v19.4b[2]\n"
      "sdot v9.4s, v0.16b, v12.4b[2]\n"
      "add %[x], %[x], #292\n"
      "sdot v17.4s, v27.16b, v19.4b[3]\n"
      "sdot v11.4s, v1.16b, v12.4b[3]\n"
      "and v2.16b, v16.16b, v31.16b\n"
      "and v5.16b, v10.16b, v31.16b\n"
      "and v18.16b, v3.16b, v31.16b\n"
      "ushll2 v30.8h, v8.16b, #0\n"
      "and v29.16b, v6.16b, v31.16b\n"
      "ushr v15.16b, v3.16b, #4\n"
      "ushll2 v27.4s, v30.8h, #0\n"
      "ushr v22.16b, v10.16b, #4\n"
      "sdot v23.4s, v2.16b, v14.4b[0]\n"
      "sdot v9.4s, v7.16b, v4.4b[0]\n"
      "sdot v17.4s, v29.16b, v14.4b[1]\n"
      "sdot v11.4s, v13.16b, v4.4b[1]\n"
      "sdot v23.4s, v5.16b, v14.4b[2]\n"
      "sdot v9.4s, v22.16b, v4.4b[2]\n"
      "sdot v17.4s, v18.16b, v14.4b[3]\n"
      "sdot v11.4s, v15.16b, v4.4b[3]\n"
      "ushll v0.4s, v30.4h, #0\n"
      "add v23.4s, v23.4s, v17.4s\n"
      "add v9.4s, v9.4s, v11.4s\n"
      "ldr q21, [%[w]]\n"
      "mla v24.4s, v23.4s, v0.4s\n"
      "mla v25.4s, v9.4s, v27.4s\n"
      "add %[w], %[w], #576\n"
      "cmp %[x], %[end]\n"
      "b.ne 1b\n"
      "fcvtl v0.4s, v21.4h\n"
      "fcvtl2 v1.4s, v21.8h\n"
      "scvtf v26.4s, v26.4s\n"
      "fmul v1.4s, v1.4s, v20.s[0]\n"
      "fmul v0.4s, v0.4s, v20.s[0]\n"
      "add v24.4s, v24.4s, v25.4s\n"
      "fmul v1.4s, v1.4s, v26.4s\n"
      "scvtf v24.4s, v24.4s\n"
      "fmul v0.4s, v0.4s, v24.4s\n"
      "fsub v0.4s, v0.4s, v1.4s\n"
      "fadd %[acc].4s, %[acc].4s, v0.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_K = arm::tile_kernel<Q4_KTile, arm::InOrderRow<Q4_KTile, super_blocks_in_order>>(
    "matmul_f32_q8_k_q4_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_K =
    arm::tile_kernel<arm::SuperBlockTile<Q5_K>>("matmul_f32_q8_k_q5_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
