// matmul_f32_q8_0_q8_0_4x4_neon: Y = X * W^T with Q8_0 weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: SMULL /
//   SMLAL2 (two products per int16 lane), SADDLP / SADALP into int32, ADDP,
//   SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight block loaded once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run() (block_tile.h); any m and n, k a multiple
//   of 32.
// - result: equal to matmul_f32_q8_0_q8_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, so
// one load gives the 4 scales, then qs[c] = the GGUF codes of row c.
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/kernel_defs.h"

namespace kernels::neon {
namespace {

struct Q8_0 : arm::BlockType<gguf::GgmlType::Q8_0, ref::BlockQ8_0>, arm::ColumnDot<arm::NeonWideCodes> {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < arm::kTileN; ++c)
      std::memcpy(p.qs + 32 * c, reinterpret_cast<const ref::BlockQ8_0*>(blocks[c])->qs, 32);
  }

  template <size_t MR>
  __attribute__((always_inline)) static Codes decode(const Packed& p) {
    Codes w;
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) {
      const auto* qs = reinterpret_cast<const int8_t*>(p.qs + 32 * c);
      w.lo[c] = vld1q_s8(qs);
      w.hi[c] = vld1q_s8(qs + 16);
    }
    return w;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 =
    arm::tile_kernel<arm::BlockTile<Q8_0>>("matmul_f32_q8_0_q8_0_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
