// Packed weight layouts of the ARM tiers: the generic driver (pack_rhs by
// groups of 4 rows, run() over the groups) and the bit-packing helpers the
// layouts share. Header-only with internal linkage, compiled in each tier's
// files with that tier's flags, like tile.h.
//
// Every packed layout keeps, per block (or super-block) of the weight type,
// the blocks of 4 consecutive rows together ("a group" = 4 output columns):
// their scales side by side, so one load gives the 4 columns' scales, and their
// codes rearranged for the tier's inner product (each kernel file documents its
// own layout). A packed group has exactly the bytes of its 4 source rows, so
// the repacked weights take no more memory than the file (plus up to 3 rows
// for the last group when n % 4 != 0, which repeats row n - 1).
//
// Driver: run_tiles (tile.h): n-outer by groups, m-inner by 4 rows of X, then
// the m % 4 rows one at a time (decode is the 1 x 4 tile).
#pragma once

#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/arm/neon/tile.h"
#include "kernels/arm/six_bit.h"
#include "kernels/matmul.h"

namespace kernels::arm {
namespace {

// pack_six_bit on 16 byte positions at once (the u are 0..63).
inline void pack_six_bit_x16(uint8x16_t u0, uint8x16_t u1, uint8x16_t u2, uint8x16_t u3, uint8_t* a, uint8_t* b,
                             uint8_t* c) {
  vst1q_u8(a, vsliq_n_u8(vandq_u8(u3, vdupq_n_u8(3)), u0, 2));
  vst1q_u8(b, vsliq_n_u8(vshrq_n_u8(u3, 2), u1, 2));
  vst1q_u8(c, vsliq_n_u8(vshrq_n_u8(u3, 4), u2, 2));
}

// The dotprod tier's "4 rows x 4 bytes" vectors: out[j] = [bytes 4j..4j+3 of
// r0, of r1, of r2, of r3], a 4 x 4 transpose of 32-bit lanes.
inline void transpose_4x4_runs(uint8x16_t r0, uint8x16_t r1, uint8x16_t r2, uint8x16_t r3, uint8x16_t* out) {
  const uint32x4_t a = vreinterpretq_u32_u8(r0), b = vreinterpretq_u32_u8(r1);
  const uint32x4_t c = vreinterpretq_u32_u8(r2), d = vreinterpretq_u32_u8(r3);
  const uint64x2_t ab_lo = vreinterpretq_u64_u32(vzip1q_u32(a, b)), cd_lo = vreinterpretq_u64_u32(vzip1q_u32(c, d));
  const uint64x2_t ab_hi = vreinterpretq_u64_u32(vzip2q_u32(a, b)), cd_hi = vreinterpretq_u64_u32(vzip2q_u32(c, d));
  out[0] = vreinterpretq_u8_u64(vzip1q_u64(ab_lo, cd_lo));
  out[1] = vreinterpretq_u8_u64(vzip2q_u64(ab_lo, cd_lo));
  out[2] = vreinterpretq_u8_u64(vzip1q_u64(ab_hi, cd_hi));
  out[3] = vreinterpretq_u8_u64(vzip2q_u64(ab_hi, cd_hi));
}

// transpose_4x4_runs of the 16 bytes at src[0..3] + offset, stored at out[0..3].
inline void interleave_4x4_runs(const uint8_t* const* src, size_t offset, uint8_t (*out)[16], uint8_t flip = 0) {
  uint8x16_t v[4];
  transpose_4x4_runs(vld1q_u8(src[0] + offset), vld1q_u8(src[1] + offset), vld1q_u8(src[2] + offset),
                     vld1q_u8(src[3] + offset), v);
  for (size_t j = 0; j < 4; ++j) vst1q_u8(out[j], veorq_u8(v[j], vdupq_n_u8(flip)));
}

// 64 bytes of a packed block as 4 vectors. Decode (MR = 1) takes them with one
// LD1 of 4 registers where GCC 12 emitted 4 LDURs (the codes sit after the
// group's scales, off the 16-byte grid of LDP): dotprod decode at N = K = 4096,
// Q4_0 4.39 -> 4.13 M instructions and Q8_0 3.86 -> 3.34 M (kernel_insn under
// qemu). The 4-row prefill tile keeps 4 loads: with the LD1, GCC 12 scheduled
// it into 4.7% more. The neon tier's kernels do not use it: Q4_0 decode ran as
// many instructions with it, Q8_0 6% more.
template <size_t MR>
inline int8x16x4_t load_x4(const void* p) {
  const auto* q = static_cast<const int8_t*>(p);
  if constexpr (MR == 1) return vld1q_s8_x4(q);
  return {vld1q_s8(q), vld1q_s8(q + 16), vld1q_s8(q + 32), vld1q_s8(q + 48)};
}

// PackedTile: a struct with
//   static size_t lhs_row_bytes(size_t k), rhs_row_bytes(size_t k);
//   static constexpr size_t kBlockElems, kBlockBytes;  // a GGUF (super-)block
//   using Packed = ...;  // one block of a group, as long as 4 GGUF blocks
//   static void pack_block(const uint8_t* const* blocks, Packed& p);
//                        // the 4 rows' GGUF blocks
//   template <size_t MR> static void compute(size_t k, const uint8_t* const* x,
//                                            const uint8_t* group, float32x4_t* out);
// (GroupRows below gives the row sizes and group(): the group's first byte.)
template <size_t kElems, size_t kRhsBlockBytes, class LhsBlock>
struct GroupRows {
  static constexpr size_t kBlockElems = kElems;
  static constexpr size_t kBlockBytes = kRhsBlockBytes;
  static size_t lhs_row_bytes(size_t k) { return k / kElems * sizeof(LhsBlock); }
  static size_t rhs_row_bytes(size_t k) { return k / kElems * kRhsBlockBytes; }
  static const uint8_t* group(const uint8_t* rhs, size_t j0, size_t, size_t rhs_row) { return rhs + j0 * rhs_row; }
};

template <class PackedTile>
void pack_groups(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using Packed = typename PackedTile::Packed;
  static_assert(sizeof(Packed) == kTileN * PackedTile::kBlockBytes, "a packed group is as long as its 4 rows");
  const auto* src = static_cast<const uint8_t*>(rhs);
  auto* dst = static_cast<uint8_t*>(rhs_packed);
  const size_t row = PackedTile::rhs_row_bytes(k);
  for (size_t j0 = 0; j0 < n; j0 += kTileN) {
    const uint8_t* rows[kTileN];
    for (size_t c = 0; c < kTileN; ++c) rows[c] = src + std::min(j0 + c, n - 1) * row;
    auto* out = reinterpret_cast<Packed*>(dst + j0 * row);
    for (size_t b = 0; b < k / PackedTile::kBlockElems; ++b) {
      const uint8_t* blocks[kTileN];
      for (size_t c = 0; c < kTileN; ++c) blocks[c] = rows[c] + b * PackedTile::kBlockBytes;
      PackedTile::pack_block(blocks, out[b]);
    }
  }
}

// The MatmulKernel of a Tile (tile.h) over GGUF rows as they are (GgufRows:
// pack_rhs = nullptr) or over groups repacked by pack_groups (n rounded up to
// whole groups). The Tile also names the types and the activation packer:
//   static constexpr gguf::GgmlType kRhsType, kLhsType;
//   static void pack_lhs(size_t m, size_t k, const float* lhs,
//                        size_t lhs_stride, void* lhs_packed);
//                       // rows of Tile::lhs_row_bytes(k) (quantize.h)
template <class Tile>
constexpr void (*pack_rhs_of())(size_t, size_t, const void*, void*) {
  if constexpr (std::is_base_of_v<GgufRows, Tile>) {
    return nullptr;
  } else {
    return pack_groups<Tile>;
  }
}

// InOrderTile: the same Tile with the compute of an in-order core
// (MatmulKernel::run_in_order); void when the kernel has none.
template <class InOrderTile>
constexpr void (*run_in_order_of())(size_t, size_t, size_t, const void*, const void*, float*, size_t) {
  if constexpr (std::is_void_v<InOrderTile>) {
    return nullptr;
  } else {
    return run_tiles<InOrderTile>;
  }
}

template <class Tile, class InOrderTile = void>
constexpr MatmulKernel tile_kernel(const char* name, Tier tier, uint64_t features) {
  constexpr bool kPacked = !std::is_base_of_v<GgufRows, Tile>;
  return MatmulKernel{
      .name = name,
      .tier = tier,
      .arch = Arch::aarch64,
      .required_features = features,
      .rhs_type = Tile::kRhsType,
      .lhs_type = Tile::kLhsType,
      .m_step = kTileM,
      .n_step = kTileN,
      .rhs_packed_size =
          [](size_t n, size_t k) {
            return (kPacked ? (n + kTileN - 1) / kTileN * kTileN : n) * Tile::rhs_row_bytes(k);
          },
      .rhs_packed_offset = [](size_t n_idx, size_t k) { return n_idx * Tile::rhs_row_bytes(k); },
      .pack_rhs = pack_rhs_of<Tile>(),
      .lhs_packed_size = [](size_t m, size_t k) { return m * Tile::lhs_row_bytes(k); },
      .lhs_packed_offset = [](size_t m_idx, size_t k) { return m_idx * Tile::lhs_row_bytes(k); },
      .pack_lhs = Tile::pack_lhs,
      .run = run_tiles<Tile>,
      .run_in_order = run_in_order_of<InOrderTile>(),
  };
}

}  // namespace
}  // namespace kernels::arm
