// matmul_f32_q8_0_q8_0_4x4_dotprod: Y = X * W^T with Q8_0 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: SDOT by element, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight block loaded once for 4 rows of X), decode and the m % 4 rows run
//   1 x 4 tiles, in one run() (arm/neon/block_tile.h); any m and n, k a
//   multiple of 32.
// - result: equal to matmul_f32_q8_0_q8_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[j][4c + t] = code 4j + t of row c (arm/neon/packed.h).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/block_tile.h"

namespace kernels::dotprod {
namespace {

struct Q8_0 : arm::BlockType<gguf::GgmlType::Q8_0, ref::BlockQ8_0>, arm::RunsDot {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const uint8_t* src[arm::kTileN];
    for (size_t c = 0; c < arm::kTileN; ++c) src[c] = blocks[c] + sizeof(uint16_t);  // the codes, after d
    auto* qs = reinterpret_cast<uint8_t(*)[16]>(p.qs);
    arm::interleave_4x4_runs(src, 0, qs);
    arm::interleave_4x4_runs(src, 16, qs + 4);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    const int8x16x4_t q03 = arm::load_x4<MR>(p.qs), q47 = arm::load_x4<MR>(p.qs + 64);
    return {{q03.val[0], q03.val[1], q03.val[2], q03.val[3], q47.val[0], q47.val[1], q47.val[2], q47.val[3]}};
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 =
    arm::tile_kernel<arm::BlockTile<Q8_0>>("matmul_f32_q8_0_q8_0_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
