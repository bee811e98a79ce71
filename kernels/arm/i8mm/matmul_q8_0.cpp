// matmul_f32_q8_0_q8_0_8x4_i8mm: Q8_0 weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 136 = 4 x 34 bytes (no growth), kChunks = 4:
//   uint16 d[4]                    fp16 scales of rows 0..3
//   int8   qs[pair q][chunk c][16] row 2q codes 8c..8c+7, then row 2q+1's
// Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h).
//
// run: block_tiles.h: 8 activation rows x 4 weight rows, 32 SMMLA per block;
// 2x4 form for the rows left over, and a last single row (decode) on 8 tiles
// at once. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct Q8_0 : arm::WeightType<gguf::GgmlType::Q8_0, ref::BlockQ8_0> {
  static constexpr size_t kChunks = 4;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t c = 0; c < 4; ++c) std::memcpy(row0 + 16 * c, blk.qs + 8 * c, 8);
  }

  static TileWeights load(const uint8_t* p) {
    TileWeights r;
    r.d = load_f16x4(p);
    const int8x16x4_t q0 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p + 8));
    const int8x16x4_t q1 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p + 72));
    for (int c = 0; c < 4; ++c) {
      r.w[0][c] = q0.val[c];
      r.w[1][c] = q1.val[c];
    }
    return r;
  }

  // load(p) with post-indexed loads (p += 136). The empty asm keeps GCC 12
  // from folding the two p += 64 into one ADD on a copy of p (2 more
  // instructions per tile and block, objdump).
  static TileWeights load_next(const uint8_t*& p) {
    TileWeights r;
    r.d = load_f16x4_post(p);
    const int8x16x4_t q0 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p));
    p += 64;
    asm("" : "+r"(p));
    const int8x16x4_t q1 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(p));
    p += 64;
    for (int c = 0; c < 4; ++c) {
      r.w[0][c] = q0.val[c];
      r.w[1][c] = q1.val[c];
    }
    return r;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 =
    arm::interleaved_kernel<BlockTiles<Q8_0>>("matmul_f32_q8_0_q8_0_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
