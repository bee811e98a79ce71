// matmul_f32_q8_0_q5_0_4x4_dotprod and
// matmul_f32_q8_1_q5_1_4x4_dotprod: Y = X * W^T with Q5_0 or Q5_1 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: CMTST and BSL / SRI to unpack the
//   5-bit codes (arm/fifth_bits.h), SDOT by element, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h).
// - m_step = kTileM = 4, n_step = kTileN = 4 (arm/neon/block_tile.h); any m
//   and n, k a multiple of 32.
// - result: equal to matmul_f32_q8_0_q5_0_1x1_ref / _q8_1_q5_1_1x1_ref bit for bit.
// - Q5_1: Q8_1 activations (pack_lhs = neon::pack_lhs_q8_1f), the mins m[c]
//   after the scales d[c], then the layout below; m_w s_x added per block.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[j][4c + t] = the GGUF byte qs[4j + t] of row c (elements 4j + t, low
// nibble, and 16 + 4j + t, high), then a 16-byte plane of the inverted fifth
// bits: byte 4c + t, bit 2j + h for element 16h + 4j + t of row c. The codes
// decode as the reference's q - 16.
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <type_traits>
#include <utility>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/fifth_bits.h"
#include "kernels/arm/neon/block_tile.h"

namespace kernels::dotprod {
namespace {

template <bool kMin>
using FifthBitType = std::conditional_t<kMin, arm::MinBlockType<gguf::GgmlType::Q5_1, ref::BlockQ5_1, 16>,
                                        arm::BlockType<gguf::GgmlType::Q5_0, ref::BlockQ5_0>>;

// Q5_0 and (kMin) Q5_1: the same codes, q - 16, and layout after the scales
// (Q5_1's 16 sum_j a_j is added back by the loop, block_tile.h).
template <bool kMin>
struct FifthBit : FifthBitType<kMin>, arm::RunsDot {
  using Block = std::conditional_t<kMin, ref::BlockQ5_1, ref::BlockQ5_0>;
  using typename arm::RunsDot::Codes;
  using Packed = typename FifthBitType<kMin>::Packed;

  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    const uint8_t* qh[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) {
      src[c] = reinterpret_cast<const Block*>(blocks[c])->qs;
      qh[c] = reinterpret_cast<const Block*>(blocks[c])->qh;
    }
    arm::interleave_4x4_runs(src, 0, reinterpret_cast<uint8_t(*)[16]>(p.qs));
    arm::pack_fifth_bit_plane(qh, p.qs + 64, [](size_t c, size_t e) {
      return std::pair<size_t, unsigned>{4 * c + e % 4, static_cast<unsigned>(2 * (e % 16 / 4) + e / 16)};
    });
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16x4_t v = arm::load_x4<MR>(p.qs);
    const uint8x16_t plane = vld1q_u8(p.qs + 64);
    Codes w;
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; ++j) {
      const uint8x16_t raw = vreinterpretq_u8_s8(v.val[j]);
      w.v[j] = arm::fifth_bit_codes<0>(raw, plane, static_cast<unsigned>(2 * j));
      w.v[4 + j] = arm::fifth_bit_codes<1>(raw, plane, static_cast<unsigned>(2 * j + 1));
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ5_0 = arm::tile_kernel<arm::BlockTile<FifthBit<false>>>(
    "matmul_f32_q8_0_q5_0_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_1 = arm::tile_kernel<arm::BlockTile<FifthBit<true>>>(
    "matmul_f32_q8_1_q5_1_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
