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

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 =
    arm::tile_kernel<arm::BlockTile<Q4_0>>("matmul_f32_q8_0_q4_0_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
