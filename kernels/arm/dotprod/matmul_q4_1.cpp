// matmul_f32_q8_1_q4_1_4x4_dotprod: Y = X * W^T with Q4_1 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR to unpack nibbles,
//   SDOT by element, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_1 rows in 48-byte blocks with float d and s (pack_lhs =
//   neon::pack_lhs_q8_1f, arm/neon/lhs_q8_0.h).
// - m_step = kTileM = 4, n_step = kTileN = 4 (arm/neon/block_tile.h); any m
//   and n, k a multiple of 32.
// - result: equal to matmul_f32_q8_1_q4_1_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c], m[c] (fp16) of the 4
// rows, then qs[j][4c + t] = the GGUF byte qs[4j + t] of row c (elements
// 4j + t, low nibble, and 16 + 4j + t, high): Q4_0's order without its XOR.
// The loop adds m_w s_x per block (block_tile.h).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/block_tile.h"

namespace kernels::dotprod {
namespace {

struct Q4_1 : arm::MinBlockType<gguf::GgmlType::Q4_1, ref::BlockQ4_1>, arm::RunsDot {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) src[c] = reinterpret_cast<const ref::BlockQ4_1*>(blocks[c])->qs;
    arm::interleave_4x4_runs(src, 0, reinterpret_cast<uint8_t(*)[16]>(p.qs));
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16x4_t v = arm::load_x4<MR>(p.qs);
    Codes w;
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; ++j) {
      const uint8x16_t raw = vreinterpretq_u8_s8(v.val[j]);
      w.v[j] = vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F)));
      w.v[4 + j] = vreinterpretq_s8_u8(vshrq_n_u8(raw, 4));
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_1 =
    arm::tile_kernel<arm::BlockTile<Q4_1>>("matmul_f32_q8_1_q4_1_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
