// matmul_f32_q8_0_q5_0_4x16_sve: Q5_0 weights x Q8_0 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): block_groups.h's layout with 5 quads a row,
// kPackedBlockBytes = 352 = 16 x 22 bytes (no growth): quads 0-3 the row's qs
// bytes 4i..4i+3 (low nibbles: elements 4i.., high: 16+4i..), quad 4 its
// fifth bits inverted (g = 1 - bit 4 of q), regrouped so that byte l holds
// g of element 4i + l at bit i and of element 16 + 4i + l at bit 4 + i
// (i = 0..3): then q - 16 = nibble - 16 g, with g brought to bit 4 by one
// shift (or none) and one AND shared by the rows. SVE1 has no BSL or SLI.
//
// LHS (pack_lhs): Q8_0 rows (lhs_rows.h).
//
// run (block_groups.h): per block 5 quad loads and 4 instructions per quad
// (mask or shift, shift, AND, SUB) shared by the rows, then per row 8 SDOT
// (indexed). m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

struct Q5_0 : arm::WeightType<gguf::GgmlType::Q5_0, ref::BlockQ5_0> {
  static constexpr size_t kQuads = 5;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) {
    for (size_t i = 0; i < 16; ++i) quad0[4 * kGroupRows * (i / 4) + 4 * r + i % 4] = blk.qs[i];
    uint32_t qh;
    std::memcpy(&qh, blk.qh, 4);
    uint8_t* g = quad0 + 4 * kGroupRows * 4 + 4 * r;
    for (size_t e = 0; e < 32; ++e) {
      const unsigned inverted = (~qh >> e) & 1u;
      const size_t half = e / 16, i = e % 16 / 4, l = e % 4;
      g[l] = static_cast<uint8_t>(g[l] | inverted << (4 * half + i));
    }
  }

  // The codes q - 16 of quad kI (0..7: low nibbles of quad kI, then high of
  // quad kI - 4) from its qs bytes u and the inverted fifth bits g.
  template <int kI>
  __attribute__((always_inline)) static svint8_t codes(svbool_t all, svuint8_t u, svuint8_t g) {
    const svuint8_t nib = kI < 4 ? svand_n_u8_x(all, u, 0x0F) : svlsr_n_u8_x(all, u, 4);
    const svuint8_t at4 = kI < 4 ? svlsl_n_u8_x(all, g, 4 - kI) : (kI == 4 ? g : svlsr_n_u8_x(all, g, kI - 4));
    return svreinterpret_s8_u8(svsub_u8_x(all, nib, svand_n_u8_x(all, at4, 0x10)));
  }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    const svbool_t all = svptrue_b8();
    const svuint8_t u0 = svld1_u8(pg8, qs), u1 = svld1_u8(pg8, qs + 4 * kGroupRows);
    const svuint8_t u2 = svld1_u8(pg8, qs + 8 * kGroupRows), u3 = svld1_u8(pg8, qs + 12 * kGroupRows);
    const svuint8_t g = svld1_u8(pg8, qs + 16 * kGroupRows);
    w0 = codes<0>(all, u0, g), w1 = codes<1>(all, u1, g), w2 = codes<2>(all, u2, g), w3 = codes<3>(all, u3, g);
    w4 = codes<4>(all, u0, g), w5 = codes<5>(all, u1, g), w6 = codes<6>(all, u2, g), w7 = codes<7>(all, u3, g);
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ5_0 =
    arm::interleaved_kernel<BlockGroups<Q5_0>>("matmul_f32_q8_0_q5_0_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
