// matmul_f32_q8_0_q8_0_8x4_i8mm: Q8_0 weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of kNr = 4 weight rows (2 SMMLA pairs), per
// block of 32, kPackedBlockBytes = 136 = 4 x 34 bytes (no growth):
//   uint16 d[4]                    fp16 scales of rows 0..3
//   int8   qs[pair q][chunk c][16] row 2q codes 8c..8c+7, then row 2q+1's
// Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h).
//
// run: tiles_q8_0.h: 8 activation rows x 4 weight rows, 32 SMMLA per block;
// 2x4 form for the rows left over, and a last single row (decode) on 8 tiles
// at once. m_step 8, n_step 4.
#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "kernels/arm/i8mm must be compiled with -march=armv8.2-a+dotprod+i8mm"
#endif

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/tiles_q8_0.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

constexpr size_t kMr = kQ8_0TileLhsRows;  // 8
constexpr size_t kNr = kQ8_0TileRows;     // 4
constexpr size_t kBlock = 32;
constexpr size_t kPackedBlockBytes = 8 + 128;  // one block of a 4-row tile

size_t tiles_of(size_t n) { return (n + kNr - 1) / kNr; }

size_t rhs_packed_size(size_t n, size_t k) { return tiles_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ8_0*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of(n); ++t) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr && t * kNr + r < n; ++r) {
        const ref::BlockQ8_0& blk = rows[(t * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        for (size_t c = 0; c < 4; ++c) std::memcpy(out + 8 + 64 * (r / 2) + 16 * c + 8 * (r % 2), blk.qs + 8 * c, 8);
      }
    }
  }
}

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_0_pairs(m, k, lhs, lhs_stride, lhs_packed, 1.0f);
}

struct Rhs {
  static constexpr size_t kTileBlockBytes = kPackedBlockBytes;

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

const MatmulKernel kMatmulQ8_0{
    .name = "matmul_f32_q8_0_q8_0_8x4_i8mm",
    .tier = Tier::i8mm,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q8_0,
    .lhs_type = gguf::GgmlType::Q8_0,
    .m_step = kMr,
    .n_step = kNr,
    .rhs_packed_size = rhs_packed_size,
    .rhs_packed_offset = rhs_packed_offset,
    .pack_rhs = pack_rhs,
    .lhs_packed_size = q8_0_lhs_packed_size,
    .lhs_packed_offset = q8_0_lhs_packed_offset,
    .pack_lhs = pack_lhs,
    .run = q8_0_run<Rhs>,
};

}  // namespace kernels::i8mm
