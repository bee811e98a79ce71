// matmul_f32_q8_0_q8_0_8x16_svei8mm: Q8_0 weights x Q8_0 activations with SVE SMMLA.
//
// Features: SVE + SVE I8MM (SMMLA on Z registers). Compiled with
// -march=armv8.2-a+sve+i8mm. Vector-length agnostic (mmla_pairs.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows (8 pairs), per
// block of 32, kPackedBlockBytes = 544 = 16 x 34 bytes (no growth):
//   uint16 d[16]              fp16 scales of rows 0..15
//   int8   qs[4][8][16]       chunk c, pair p: row 2p codes 8c..8c+7, then row 2p+1's
// Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_rows.h).
//
// run (mmla_pairs.h): per pass (VL/128 weight pairs), 8 activation rows at a
// time: per block 4 loads shared by the rows, then per pair of rows 4 SMMLA,
// one convert and one FMA. Leftover rows go 2 at a time. m_step 8, n_step 16.
// The pair layout gives SMMLA's 2x2 tiles, half the multiply instructions of
// SDOT in prefill; a single row (decode) wastes half of each, so the SDOT
// kernel (matmul_q8_0.cpp) is the cheaper one there.
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

struct Q8_0 : arm::WeightType<gguf::GgmlType::Q8_0, ref::BlockQ8_0> {
  static constexpr size_t kChunks = 4;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t c = 0; c < 4; ++c) std::memcpy(row0 + 128 * c, blk.qs + 8 * c, 8);
  }

  static void load(svbool_t pg8, const uint8_t* p, svint8_t& w0, svint8_t& w1, svint8_t& w2, svint8_t& w3) {
    const int8_t* q = reinterpret_cast<const int8_t*>(p);
    w0 = svld1_s8(pg8, q);
    w1 = svld1_s8(pg8, q + 128);
    w2 = svld1_s8(pg8, q + 256);
    w3 = svld1_s8(pg8, q + 384);
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ8_0Mmla =
    arm::interleaved_kernel<MmlaGroups<Q8_0>>("matmul_f32_q8_0_q8_0_8x16_svei8mm", Tier::sve, kRequiredFeaturesI8mm);

}  // namespace kernels::sve
