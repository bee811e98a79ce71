// matmul_f32_q8_1_q4_1_4x16_sve: Q4_1 weights x Q8_1 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): block_groups.h's layout with the mins,
// kPackedBlockBytes = 320 = 16 x 20 bytes (no growth), the 4 quads of a row
// its qs bytes as they are (low nibbles: elements 4i..4i+3, high: 16+4i..).
//
// LHS (pack_lhs): Q8_1 rows (lhs_rows.h).
//
// run (block_groups.h): per block, 4 quad loads + 8 AND/LSR shared by the
// rows (codes 0..15), then per row 8 SDOT (indexed), acc += float(sum) * d_w
// * d_a and acc += m_w * s_a. m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

struct Q4_1 : arm::WeightType<gguf::GgmlType::Q4_1, ref::BlockQ4_1> {
  static constexpr bool kMin = true;
  static constexpr size_t kQuads = 4;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) { pack_quads(blk.qs, 4, quad0, r); }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    const svbool_t all = svptrue_b8();
    svuint8_t u0, u1, u2, u3;
    load_quads(pg8, qs, u0, u1, u2, u3);
    w0 = svreinterpret_s8_u8(svand_n_u8_x(all, u0, 0x0F)), w1 = svreinterpret_s8_u8(svand_n_u8_x(all, u1, 0x0F));
    w2 = svreinterpret_s8_u8(svand_n_u8_x(all, u2, 0x0F)), w3 = svreinterpret_s8_u8(svand_n_u8_x(all, u3, 0x0F));
    w4 = svreinterpret_s8_u8(svlsr_n_u8_x(all, u0, 4)), w5 = svreinterpret_s8_u8(svlsr_n_u8_x(all, u1, 4));
    w6 = svreinterpret_s8_u8(svlsr_n_u8_x(all, u2, 4)), w7 = svreinterpret_s8_u8(svlsr_n_u8_x(all, u3, 4));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_1 =
    arm::interleaved_kernel<BlockGroups<Q4_1>>("matmul_f32_q8_1_q4_1_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
