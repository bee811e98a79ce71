// matmul_f32_q8_0_q4_0_4x16_sve: Q4_0 weights x Q8_0 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): block_groups.h's layout, kPackedBlockBytes = 288 =
// 16 x 18 bytes (no growth), the 4 quads of a row its qs bytes with every
// nibble XOR 8 (low nibbles: elements 4i..4i+3, high: 16+4i..). XOR 8 makes
// `lsl 4` / `and 0xF0` give 16 * (q - 8) as int8; the 1/16 goes into the
// activation scale.
//
// LHS (pack_lhs): Q8_0 rows (lhs_rows.h), scale multiplied by 1/16.
//
// run (block_groups.h): per block, 4 quad loads + 8 shift/and shared by the
// rows, then per row 8 SDOT (indexed). m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

struct Q4_0 : arm::WeightType<gguf::GgmlType::Q4_0, ref::BlockQ4_0, 1.0f / 16> {
  static constexpr size_t kQuads = 4;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) {
    for (size_t i = 0; i < 16; ++i) quad0[4 * kGroupRows * (i / 4) + 4 * r + i % 4] = blk.qs[i] ^ 0x88;
  }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    const svuint8_t u0 = svld1_u8(pg8, qs), u1 = svld1_u8(pg8, qs + 4 * kGroupRows);
    const svuint8_t u2 = svld1_u8(pg8, qs + 8 * kGroupRows), u3 = svld1_u8(pg8, qs + 12 * kGroupRows);
    w0 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u0, 4));
    w1 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u1, 4));
    w2 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u2, 4));
    w3 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u3, 4));
    w4 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u0, 0xF0));
    w5 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u1, 0xF0));
    w6 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u2, 0xF0));
    w7 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u3, 0xF0));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 =
    arm::interleaved_kernel<BlockGroups<Q4_0>>("matmul_f32_q8_0_q4_0_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
