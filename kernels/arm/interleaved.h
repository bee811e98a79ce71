// What the i8mm and sve tiers' kernels share around their loops: weights
// repacked at load into tiles of K::kRows rows (4 for SMMLA pairs, 16 for the
// SVE groups), block by block, the activation formats' sizes, and the
// MatmulKernel built from a kernel struct K. No intrinsics: each tier's files
// include it and compile it with their flags (internal linkage, so no copy
// built with wider flags can be merged into another tier's callers).
//
// K, a KernelShape below (its weight type T a WeightType) and:
//   static void pack(const GgufBlock& blk, uint8_t* out, size_t r);
//                       // row r of the tile into its packed block at out,
//                       // zeroed first: a row past n stays zero (d = 0)
//   static void run(size_t m, size_t n, size_t k, const void* lhs_packed,
//                   const void* rhs_packed, float* dst, size_t dst_stride);
// A kernel over the GGUF rows as they are (FloatRows below) sets kGgufRows:
// no pack_rhs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

using PackLhsFn = void (*)(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);

// Activations packed by kPack into units of kRowsPerUnit rows (1: rows, 2:
// pairs of rows), kUnitBytes per block of kElems elements.
template <gguf::GgmlType kT, size_t kElems, size_t kUnitBytes, size_t kRowsPerUnit, PackLhsFn kPack>
struct LhsFormat {
  static constexpr gguf::GgmlType kType = kT;
  static constexpr PackLhsFn pack = kPack;
  static size_t packed_size(size_t m, size_t k) {
    return (m + kRowsPerUnit - 1) / kRowsPerUnit * (k / kElems) * kUnitBytes;
  }
  static size_t packed_offset(size_t m_idx, size_t k) { return m_idx / kRowsPerUnit * (k / kElems) * kUnitBytes; }
};

// A weight type: its ggml type and GGUF block, and the power of two its
// decoding folds into the activation scale (exact: 1/16 for 16 x the 4-bit
// codes).
template <gguf::GgmlType kT, class Block, float kMult = 1.0f>
struct WeightType {
  static constexpr gguf::GgmlType kType = kT;
  using GgufBlock = Block;
  static constexpr float kLhsMult = kMult;
  static constexpr bool kMin = false;  // x = d * q + m (Q4_1, Q5_1): i8mm/block_tiles.h
};

// The constants of a kernel of weight type T: activations in format LhsT,
// blocks of kBlockElems elements, tiles of kTileRows weight rows (n_step)
// of kTileBlockBytes per block, passes of kPassRows activation rows (m_step).
template <class T, class LhsT, size_t kBlockElems, size_t kTileRows, size_t kPassRows, size_t kTileBlockBytes>
struct KernelShape {
  static constexpr gguf::GgmlType kType = T::kType;
  using GgufBlock = typename T::GgufBlock;
  static constexpr float kLhsMult = T::kLhsMult;
  using Lhs = LhsT;
  static constexpr size_t kBlock = kBlockElems, kRows = kTileRows, kMr = kPassRows;
  static constexpr size_t kPackedBlockBytes = kTileBlockBytes;
};

// F32 rows, copied (the float kernels' format; mult is 1).
inline void pack_lhs_f32_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float) {
  auto* out = static_cast<float*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) std::memcpy(out + i * k, lhs + i * lhs_stride, k * sizeof(float));
}
using F32Rows = LhsFormat<gguf::GgmlType::F32, 1, sizeof(float), 1, pack_lhs_f32_rows>;

// The i8mm and sve Q6_K layouts keep the codes q_e ^ 32 of 4 elements (e =
// 0..3) in 3 bytes: byte e = (q_e ^ 32) << 2 | two bits of q_3 ^ 32 (bits 5-4
// in byte 0, 3-2 in byte 1, 1-0 in byte 2), so that 4 * (q_e - 32) is one AND
// with 0xFC for e < 3. q: the 4 codes of the block at elements e0 + e * step.
inline void pack_q6_k_quad(const ref::BlockQ6_K& blk, size_t e0, size_t step, uint8_t* byte0, size_t plane_stride) {
  uint8_t q[4];
  for (size_t e = 0; e < 4; ++e) q[e] = ref::q6_k_code(blk, e0 + e * step) ^ 32;
  for (size_t e = 0; e < 3; ++e)
    byte0[e * plane_stride] = static_cast<uint8_t>(q[e] << 2 | ((q[3] >> (4 - 2 * e)) & 3));
}

using RunFn = void (*)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                       size_t dst_stride);

// A kernel over the float GGUF rows as they are (F16: Elem uint16_t, F32:
// float), with F32 activations.
template <gguf::GgmlType kT, class Elem, size_t kTileRows, size_t kPassRows, RunFn kRun>
struct FloatRows : KernelShape<WeightType<kT, Elem>, F32Rows, 1, kTileRows, kPassRows, kTileRows * sizeof(Elem)> {
  static constexpr bool kGgufRows = true;
  static constexpr RunFn run = kRun;
};

template <class K>
size_t tiles_of(size_t n) {
  return (n + K::kRows - 1) / K::kRows;
}

template <class K>
void pack_tiles(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / K::kBlock;
  const auto* rows = static_cast<const typename K::GgufBlock*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of<K>(n); ++t) {
    for (size_t b = 0; b < nb; ++b, out += K::kPackedBlockBytes) {
      std::memset(out, 0, K::kPackedBlockBytes);
      for (size_t r = 0; r < K::kRows && t * K::kRows + r < n; ++r) K::pack(rows[(t * K::kRows + r) * nb + b], out, r);
    }
  }
}

template <class K>
constexpr bool gguf_rows() {
  if constexpr (requires { K::kGgufRows; }) {
    return K::kGgufRows;
  } else {
    return false;
  }
}

template <class K>
constexpr void (*pack_rhs_of())(size_t, size_t, const void*, void*) {
  if constexpr (gguf_rows<K>()) {
    return nullptr;
  } else {
    return pack_tiles<K>;
  }
}

// K::run_in_order where the kernel has one (MatmulKernel::run_in_order).
template <class K>
constexpr decltype(MatmulKernel::run) in_order_run_of() {
  if constexpr (requires { K::run_in_order; }) {
    return K::run_in_order;
  } else {
    return nullptr;
  }
}

template <class K>
constexpr MatmulKernel interleaved_kernel(const char* name, Tier tier, uint64_t features) {
  using Lhs = typename K::Lhs;
  return MatmulKernel{
      .name = name,
      .tier = tier,
      .arch = Arch::aarch64,
      .required_features = features,
      .rhs_type = K::kType,
      .lhs_type = Lhs::kType,
      .m_step = K::kMr,
      .n_step = K::kRows,
      .rhs_packed_size =
          [](size_t n, size_t k) {
            const size_t units = gguf_rows<K>() ? n * k : tiles_of<K>(n) * (k / K::kBlock);
            return units * (gguf_rows<K>() ? sizeof(typename K::GgufBlock) : K::kPackedBlockBytes);
          },
      .rhs_packed_offset =
          [](size_t n_idx, size_t k) {
            if (gguf_rows<K>()) return n_idx * k * sizeof(typename K::GgufBlock);
            return n_idx / K::kRows * (k / K::kBlock) * K::kPackedBlockBytes;
          },
      .pack_rhs = pack_rhs_of<K>(),
      .lhs_packed_size = Lhs::packed_size,
      .lhs_packed_offset = Lhs::packed_offset,
      .pack_lhs = [](size_t m, size_t k, const float* lhs, size_t lhs_stride,
                     void* lhs_packed) { Lhs::pack(m, k, lhs, lhs_stride, lhs_packed, K::kLhsMult); },
      .run = K::run,
      .run_in_order = in_order_run_of<K>(),
  };
}

}  // namespace
}  // namespace kernels::arm
