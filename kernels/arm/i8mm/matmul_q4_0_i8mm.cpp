// matmul_f32_q8_0_q4_0_8x4_i8mm: Q4_0 weights x Q8_0 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of kNr = 4 weight rows (2 SMMLA pairs), per
// block of 32, kPackedBlockBytes = 72 = 4 x 18 bytes (no growth):
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7, every nibble XOR 8
// XOR 8 turns a code q (value q - 8) into the 4-bit two's complement of q - 8,
// so `shl 4` (low nibbles) and `and 0xF0` (high nibbles) give 16 * (q - 8) as
// int8 with 2 instructions per 32 weights; the 1/16 goes into the activation
// scale. Half g's low nibbles are elements 8g..8g+7, high nibbles 16+8g..23+8g.
// Missing rows of the last tile are zero (d = 0).
//
// LHS (pack_lhs): Q8_0 pairs (lhs_pairs.h), scale multiplied by 1/16.
//
// run: tiles of kMr = 8 activation rows x kNr = 4 weight rows: per block 4
// pairs x 2 pairs x 4 chunks = 32 SMMLA, then per 2x2 tile one convert and one
// FMA with scale d_w * d_a. Rows left over use the 2x4 form of the same code,
// and a last single row (decode) runs on 8 tiles at once (tiles_q8_0.h); the
// float operations per output are identical in every form: a result does not
// depend on how the rows were split. m_step 8, n_step 4.
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
constexpr size_t kPackedBlockBytes = 8 + 64;  // one block of a 4-row tile

size_t tiles_of(size_t n) { return (n + kNr - 1) / kNr; }

size_t rhs_packed_size(size_t n, size_t k) { return tiles_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ4_0*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of(n); ++t) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      for (size_t r = 0; r < kNr; ++r) {
        const size_t row = t * kNr + r;
        uint16_t d = 0;
        uint8_t qs[16] = {};  // zero after the XOR: code 8, value 0
        if (row < n) {
          const ref::BlockQ4_0& blk = rows[row * nb + b];
          d = blk.d;
          for (int i = 0; i < 16; ++i) qs[i] = blk.qs[i] ^ 0x88;
        }
        std::memcpy(out + 2 * r, &d, 2);
        const size_t q = r / 2, half_row = r % 2;
        for (size_t g = 0; g < 2; ++g) std::memcpy(out + 8 + 32 * q + 16 * g + 8 * half_row, qs + 8 * g, 8);
      }
    }
  }
}

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_0_pairs(m, k, lhs, lhs_stride, lhs_packed, 1.0f / 16);
}

struct Rhs {
  static constexpr size_t kTileBlockBytes = kPackedBlockBytes;

  static TileWeights load(const uint8_t* p) {
    TileWeights r;
    r.d = load_f16x4(p);
    const uint8x16x4_t nib = vld1q_u8_x4(p + 8);
    const uint8x16_t high = vdupq_n_u8(0xF0);
    for (int q = 0; q < 2; ++q) {
      const uint8x16_t g0 = nib.val[2 * q], g1 = nib.val[2 * q + 1];
      r.w[q][0] = vreinterpretq_s8_u8(vshlq_n_u8(g0, 4));
      r.w[q][1] = vreinterpretq_s8_u8(vshlq_n_u8(g1, 4));
      r.w[q][2] = vreinterpretq_s8_u8(vandq_u8(g0, high));
      r.w[q][3] = vreinterpretq_s8_u8(vandq_u8(g1, high));
    }
    return r;
  }

  // load(p) with post-indexed loads (p += 72). A separate copy: routing load()
  // through a shared helper changed GCC's code for the 8-row tile (M=64 took
  // 0.03% more instructions).
  static TileWeights load_next(const uint8_t*& p) {
    TileWeights r;
    r.d = load_f16x4_post(p);
    const uint8x16x4_t nib = vld1q_u8_x4(p);
    p += 64;
    const uint8x16_t high = vdupq_n_u8(0xF0);
    for (int q = 0; q < 2; ++q) {
      const uint8x16_t g0 = nib.val[2 * q], g1 = nib.val[2 * q + 1];
      r.w[q][0] = vreinterpretq_s8_u8(vshlq_n_u8(g0, 4));
      r.w[q][1] = vreinterpretq_s8_u8(vshlq_n_u8(g1, 4));
      r.w[q][2] = vreinterpretq_s8_u8(vandq_u8(g0, high));
      r.w[q][3] = vreinterpretq_s8_u8(vandq_u8(g1, high));
    }
    return r;
  }
};

}  // namespace

const MatmulKernel kMatmulQ4_0{
    .name = "matmul_f32_q8_0_q4_0_8x4_i8mm",
    .tier = Tier::i8mm,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q4_0,
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
