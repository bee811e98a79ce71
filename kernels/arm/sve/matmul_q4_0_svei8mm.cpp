// matmul_f32_q8_0_q4_0_8x16_svei8mm: Q4_0 weights x Q8_0 activations with SVE SMMLA.
//
// Features: SVE + SVE I8MM (SMMLA on Z registers). Compiled with
// -march=armv8.2-a+sve+i8mm. Vector-length agnostic (mmla_pairs.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows (8 pairs), per
// block of 32, kPackedBlockBytes = 288 = 16 x 18 bytes (no growth):
//   uint16 d[16]              fp16 scales of rows 0..15
//   uint8  qs[2][8][16]       half g, pair p: row 2p bytes 8g..8g+7, then row
//                             2p+1's, every nibble XOR 8 (low nibbles: elements
//                             8g..8g+7, high: 16+8g..); `lsl 4` / `and 0xF0` give
//                             16 * (q - 8) as int8, the 1/16 goes into the
//                             activation scale
// Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_rows.h), scale multiplied by 1/16.
//
// run (mmla_pairs.h): per pass (VL/128 weight pairs), 8 activation rows at a
// time: per block 2 loads and 4 shifts/masks shared by the rows, then per
// pair of rows 4 SMMLA,
// one convert and one FMA. Leftover rows go 2 at a time. m_step 8, n_step 16.
// The pair layout gives SMMLA's 2x2 tiles, half the multiply instructions of
// SDOT in prefill; a single row (decode) wastes half of each, so the SDOT
// kernel (matmul_q4_0.cpp) is the cheaper one there.
#if !defined(__ARM_FEATURE_SVE_MATMUL_INT8)
#error "matmul_*_svei8mm.cpp must be compiled with -march=armv8.2-a+sve+i8mm"
#endif

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/mmla_pairs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

struct Q4_0 : arm::WeightType<gguf::GgmlType::Q4_0, ref::BlockQ4_0, 1.0f / 16> {
  static constexpr size_t kChunks = 2;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[128 * (i / 8) + i % 8] = blk.qs[i] ^ 0x88;
  }

  static void load(svbool_t pg8, const uint8_t* p, svint8_t& w0, svint8_t& w1, svint8_t& w2, svint8_t& w3) {
    // Chunks 0, 1 (elements 0..15) are the low nibbles of halves 0, 1; chunks
    // 2, 3 the high nibbles.
    const svuint8_t g0 = svld1_u8(pg8, p), g1 = svld1_u8(pg8, p + 128);
    const svbool_t all = svptrue_b8();
    w0 = svreinterpret_s8_u8(svlsl_n_u8_x(all, g0, 4));
    w1 = svreinterpret_s8_u8(svlsl_n_u8_x(all, g1, 4));
    w2 = svreinterpret_s8_u8(svand_n_u8_x(all, g0, 0xF0));
    w3 = svreinterpret_s8_u8(svand_n_u8_x(all, g1, 0xF0));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ4_0Mmla =
    arm::interleaved_kernel<MmlaGroups<Q4_0>>("matmul_f32_q8_0_q4_0_8x16_svei8mm", Tier::sve, kRequiredFeaturesI8mm);

}  // namespace kernels::sve
