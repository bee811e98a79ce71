// matmul_f32_q8_0_q5_0_4x16_sve and matmul_f32_q8_1_q5_1_4x16_sve: Q5_0
// weights x Q8_0 activations and Q5_1 x Q8_1, with SVE SDOT, one struct for
// both (Q5<kOne>).
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): block_groups.h's layout with 5 quads a row,
// kPackedBlockBytes = 352 = 16 x 22 bytes (Q5_0) and 384 = 16 x 24 (Q5_1,
// with the mins), no growth: quads 0-3 the row's qs bytes 4i..4i+3 (low
// nibbles: elements 4i.., high: 16+4i..), quad 4 its fifth bits f regrouped
// so that byte l holds f of element 4i + l at bit i and of element 16 + 4i + l
// at bit 4 + i (i = 0..3); Q5_0 keeps them inverted (g = 1 - f), so that
// q - 16 = nibble - 16 g; Q5_1 takes q = nibble + 16 f. The bit comes to bit 4
// with one shift (or none) and one AND shared by the rows, then one SUB or
// ORR (SVE1 has no BSL or SLI).
//
// LHS (pack_lhs): Q8_0 rows, Q8_1 rows for Q5_1 (lhs_rows.h).
//
// run (block_groups.h): per block 5 quad loads and 4 instructions per quad
// (mask or shift, shift, AND, SUB or ORR) shared by the rows, then per row 8
// SDOT (indexed); Q5_1 adds m_w * s_a. m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>
#include <type_traits>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

template <bool kOne>
struct Q5 : arm::WeightType<kOne ? gguf::GgmlType::Q5_1 : gguf::GgmlType::Q5_0,
                            std::conditional_t<kOne, ref::BlockQ5_1, ref::BlockQ5_0>> {
  using GgufBlock = std::conditional_t<kOne, ref::BlockQ5_1, ref::BlockQ5_0>;
  static constexpr bool kMin = kOne;
  static constexpr size_t kQuads = 5;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) {
    pack_quads(blk.qs, 4, quad0, r);
    uint32_t qh;
    std::memcpy(&qh, blk.qh, 4);
    uint8_t* g = quad0 + 4 * kGroupRows * 4 + 4 * r;
    for (size_t e = 0; e < 32; ++e) {
      const unsigned bit = ((kOne ? qh : ~qh) >> e) & 1u;
      const size_t half = e / 16, i = e % 16 / 4, l = e % 4;
      g[l] = static_cast<uint8_t>(g[l] | bit << (4 * half + i));
    }
  }

  // The codes q - 16 (Q5_0) or q (Q5_1) of quad kI (0..7: low nibbles of quad
  // kI, then high of quad kI - 4) from its qs bytes u and fifth bits g.
  template <int kI>
  __attribute__((always_inline)) static svint8_t codes(svbool_t all, svuint8_t u, svuint8_t g) {
    const svuint8_t nib = kI < 4 ? svand_n_u8_x(all, u, 0x0F) : svlsr_n_u8_x(all, u, 4);
    const svuint8_t at4 = kI < 4 ? svlsl_n_u8_x(all, g, 4 - kI) : (kI == 4 ? g : svlsr_n_u8_x(all, g, kI - 4));
    const svuint8_t fifth = svand_n_u8_x(all, at4, 0x10);
    return svreinterpret_s8_u8(kOne ? svorr_u8_x(all, nib, fifth) : svsub_u8_x(all, nib, fifth));
  }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    const svbool_t all = svptrue_b8();
    svuint8_t u0, u1, u2, u3;
    load_quads(pg8, qs, u0, u1, u2, u3);
    const svuint8_t g = svld1_u8(pg8, qs + 16 * kGroupRows);
    w0 = codes<0>(all, u0, g), w1 = codes<1>(all, u1, g), w2 = codes<2>(all, u2, g), w3 = codes<3>(all, u3, g);
    w4 = codes<4>(all, u0, g), w5 = codes<5>(all, u1, g), w6 = codes<6>(all, u2, g), w7 = codes<7>(all, u3, g);
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ5_0 =
    arm::interleaved_kernel<BlockGroups<Q5<false>>>("matmul_f32_q8_0_q5_0_4x16_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_1 =
    arm::interleaved_kernel<BlockGroups<Q5<true>>>("matmul_f32_q8_1_q5_1_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
