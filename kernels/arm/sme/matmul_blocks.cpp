// matmul_f32_f32_<q4_0|q8_0>_<G>x<P>_sme: Q4_0 and Q8_0 weights on SME outer
// products for prefill, the i8mm kernel of the type for a single row.
//
// Features: Advanced SIMD + dotprod + I8MM (the i8mm kernel and its packing)
// + SME. The outer-product loop is f32_panel_sme.S, in streaming mode;
// everything here runs outside it.
//
// Why float: SME's integer outer product (SMOPA) would need a read-out, a
// convert and a scale per ZA row for every block of 32, since each block has
// its own two scales; FMOPA on dequantized weights accumulates across blocks
// in ZA and costs, per k, 4 loads and 4 FMOPA for 2R x 2R products.
//
// Geometry (R = VL / 4 floats per streaming vector, read once per process):
// groups of G = 2R activation rows, panels of P = 2R weight columns; at 256
// bits 16 x 16, at 512 bits 32 x 32.
//
// RHS: exactly the i8mm kernel's (matmul_q4_0.cpp, matmul_q8_0.cpp:
// tiles of 4 rows, per block d[4] and the codes of row pairs in 8-code
// chunks; no growth). run() dequantizes a panel
// for a chunk of K into a k-major float buffer on the stack (P floats per k)
// once, and every group of rows reuses it.
//
// LHS: per group of G rows, a 64-byte header with a tag, then
//   kRowsF32:   act[k * G + row] floats (rows the group lacks are zero), or
//   kOneRowQ8:  a group of one row: the i8mm kernel's Q8_0 pair of that row
//               (its scale carries the kernel's factor: 1/16 for Q4_0),
// so a single row (decode, or the last row of a batch) runs the i8mm code on
// the bytes it expects and a result does not depend on how the rows were
// split into calls. m_step G, n_step P.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/sme/kernel_defs.h"

namespace kernels::sme {
namespace {

constexpr size_t kBlock = 32;
constexpr size_t kTileCols = 4;           // weight rows per i8mm tile
constexpr size_t kHeaderBytes = 64;
constexpr uint32_t kRowsF32 = 0x32336652;   // "Rf32"
constexpr uint32_t kOneRowQ8 = 0x38516f31;  // "1oQ8"
constexpr size_t kScratchFloats = 8192;   // 32 KiB: the dequantized panel chunk

// The i8mm tiles of a type, block by block: put(x, y, kk) gets rows 0 and 1
// (x) and rows 2 and 3 (y), 8 signed codes of each row for elements kk..kk+7.
struct Q4_0 {
  static constexpr const char* kName = "q4_0";
  static constexpr gguf::GgmlType kType = gguf::GgmlType::Q4_0;
  static constexpr size_t kTileBlockBytes = 8 + 64;
  static const MatmulKernel& i8mm() { return i8mm::kMatmulQ4_0; }
  // Nibbles XOR 8: low nibbles elements 8g.., high nibbles 16 + 8g.. (the
  // shifts sign-extend them to q - 8).
  template <class Put>
  static void block(const uint8_t* tile, Put&& put) {
    for (size_t g = 0; g < 2; ++g) {
      const int8x16_t x = vld1q_s8(reinterpret_cast<const int8_t*>(tile + 8 + 16 * g));
      const int8x16_t y = vld1q_s8(reinterpret_cast<const int8_t*>(tile + 8 + 32 + 16 * g));
      put(vshrq_n_s8(vshlq_n_s8(x, 4), 4), vshrq_n_s8(vshlq_n_s8(y, 4), 4), 8 * g);
      put(vshrq_n_s8(x, 4), vshrq_n_s8(y, 4), 16 + 8 * g);
    }
  }
};

struct Q8_0 {
  static constexpr const char* kName = "q8_0";
  static constexpr gguf::GgmlType kType = gguf::GgmlType::Q8_0;
  static constexpr size_t kTileBlockBytes = 8 + 128;
  static const MatmulKernel& i8mm() { return i8mm::kMatmulQ8_0; }
  template <class Put>
  static void block(const uint8_t* tile, Put&& put) {
    for (size_t c = 0; c < 4; ++c) {
      put(vld1q_s8(reinterpret_cast<const int8_t*>(tile + 8 + 16 * c)),
          vld1q_s8(reinterpret_cast<const int8_t*>(tile + 8 + 64 + 16 * c)), 8 * c);
    }
  }
};

size_t group_rows() { return vector_bytes() / 2; }
size_t panel_cols() { return vector_bytes() / 2; }
// A multiple of the block and of the loop's unroll by 4.
size_t chunk_k() { return kScratchFloats / panel_cols() / kBlock * kBlock; }

size_t groups_of(size_t n, size_t per) { return (n + per - 1) / per; }
size_t group_bytes(size_t k) { return kHeaderBytes + group_rows() * k * sizeof(float); }

template <class W>
size_t rhs_packed_size(size_t n, size_t k) { return W::i8mm().rhs_packed_size(n, k); }
template <class W>
size_t rhs_packed_offset(size_t n_idx, size_t k) { return W::i8mm().rhs_packed_offset(n_idx, k); }
template <class W>
void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) { W::i8mm().pack_rhs(n, k, rhs, rhs_packed); }

size_t lhs_packed_size(size_t m, size_t k) { return groups_of(m, group_rows()) * group_bytes(k); }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx / group_rows() * group_bytes(k); }

uint32_t tag_of(const uint8_t* group) {
  uint32_t tag;
  std::memcpy(&tag, group, 4);
  return tag;
}

// act[i * ld + r] = x[r * stride + i]: 4 x 4 blocks through registers (k is a
// multiple of 32), rows beyond a multiple of 4 one at a time.
void transpose_rows(const float* x, size_t stride, size_t rows, size_t k, float* act, size_t ld) {
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* x0 = x + r * stride;
    for (size_t i = 0; i < k; i += 4) {
      const float32x4_t a = vld1q_f32(x0 + i), b = vld1q_f32(x0 + stride + i);
      const float32x4_t c = vld1q_f32(x0 + 2 * stride + i), d = vld1q_f32(x0 + 3 * stride + i);
      const float32x4_t ab0 = vtrn1q_f32(a, b), ab1 = vtrn2q_f32(a, b);
      const float32x4_t cd0 = vtrn1q_f32(c, d), cd1 = vtrn2q_f32(c, d);
      auto lo = [](float32x4_t p, float32x4_t q) {
        return vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(p), vreinterpretq_f64_f32(q)));
      };
      auto hi = [](float32x4_t p, float32x4_t q) {
        return vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(p), vreinterpretq_f64_f32(q)));
      };
      float* out = act + i * ld + r;
      vst1q_f32(out, lo(ab0, cd0));
      vst1q_f32(out + ld, lo(ab1, cd1));
      vst1q_f32(out + 2 * ld, hi(ab0, cd0));
      vst1q_f32(out + 3 * ld, hi(ab1, cd1));
    }
  }
  for (; r < rows; ++r) {
    for (size_t i = 0; i < k; ++i) act[i * ld + r] = x[r * stride + i];
  }
}

template <class W>
void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t g_rows = group_rows();
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t g0 = 0; g0 < m; g0 += g_rows, out += group_bytes(k)) {
    const size_t rows = std::min(g_rows, m - g0);
    const float* x = lhs + g0 * lhs_stride;
    std::memset(out, 0, kHeaderBytes);
    if (rows == 1) {
      std::memcpy(out, &kOneRowQ8, 4);
      W::i8mm().pack_lhs(1, k, x, lhs_stride, out + kHeaderBytes);
      continue;
    }
    std::memcpy(out, &kRowsF32, 4);
    auto* act = reinterpret_cast<float*>(out + kHeaderBytes);
    if (rows < g_rows) std::memset(act, 0, g_rows * k * sizeof(float));
    transpose_rows(x, lhs_stride, rows, k, act, g_rows);
  }
}

// out[kk * P + c] = weight (c0 + c, k0 + kk) for kk < kc, c < cols: the i8mm
// tiles of the panel, 4 columns x 8 k at a time put k-major with one TBL.
template <class W>
void dequantize_panel(const uint8_t* rhs, size_t nb, size_t c0, size_t cols, size_t k0, size_t kc, float* out) {
  const size_t p = panel_cols();
  if (cols < p) std::memset(out, 0, kc * p * sizeof(float));
  static constexpr uint8_t kIdx[16] = {0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27};
  const uint8x16_t idx0 = vld1q_u8(kIdx), idx1 = vaddq_u8(idx0, vdupq_n_u8(4));
  for (size_t t = 0; t * kTileCols < cols; ++t) {
    const uint8_t* tile = rhs + ((c0 / kTileCols + t) * nb + k0 / kBlock) * W::kTileBlockBytes;
    float* col = out + t * kTileCols;
    for (size_t b = 0; b < kc / kBlock; ++b, tile += W::kTileBlockBytes) {
      const float32x4_t d = vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(tile)));
      W::block(tile, [&](int8x16_t x, int8x16_t y, size_t kk) {
        const int8x16x2_t xy = {{x, y}};
        kk += b * kBlock;
        for (const uint8x16_t& idx : {idx0, idx1}) {
          const int8x16_t t4 = vqtbl2q_s8(xy, idx);  // 4 k x rows 0..3
          const int16x8_t lo = vmovl_s8(vget_low_s8(t4)), hi = vmovl_high_s8(t4);
          vst1q_f32(col + (kk + 0) * p, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
          vst1q_f32(col + (kk + 1) * p, vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), d));
          vst1q_f32(col + (kk + 2) * p, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
          vst1q_f32(col + (kk + 3) * p, vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), d));
          kk += 4;
        }
      });
    }
  }
}

template <class W>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride) {
  if (m == 0 || n == 0) return;
  const size_t nb = k / kBlock, g_rows = group_rows(), p = panel_cols(), kc_max = chunk_k();
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  bool any_f32 = false;
  for (size_t g0 = 0; g0 < m; g0 += g_rows) {
    const uint8_t* group = lhs + lhs_packed_offset(g0, k);
    if (tag_of(group) == kOneRowQ8) {
      W::i8mm().run(1, n, k, group + kHeaderBytes, rhs_packed, dst + g0 * dst_stride, dst_stride);
    } else {
      any_f32 = true;
    }
  }
  if (!any_f32) return;
  alignas(64) float panel[kScratchFloats];
  for (size_t c0 = 0; c0 < n; c0 += p) {
    const size_t cols = std::min(p, n - c0);
    for (size_t k0 = 0; k0 < k; k0 += kc_max) {
      const size_t kc = std::min(kc_max, k - k0);
      dequantize_panel<W>(rhs, nb, c0, cols, k0, kc, panel);
      for (size_t g0 = 0; g0 < m; g0 += g_rows) {
        const uint8_t* group = lhs + lhs_packed_offset(g0, k);
        if (tag_of(group) != kRowsF32) continue;
        const PanelArgs a{reinterpret_cast<const float*>(group + kHeaderBytes) + k0 * g_rows,
                          panel,
                          dst + g0 * dst_stride + c0,
                          dst_stride * sizeof(float),
                          kc,
                          std::min(g_rows, m - g0),
                          cols,
                          k0 > 0};
        engine_sme_f32_panel(&a);
      }
    }
  }
}

template <class W>
MatmulKernel kernel() {
  static const std::string name = std::string("matmul_f32_f32_") + W::kName + "_" + std::to_string(group_rows()) +
                                  "x" + std::to_string(panel_cols()) + "_sme";
  return MatmulKernel{
      .name = name.c_str(),
      .tier = Tier::sme,
      .arch = Arch::aarch64,
      .required_features = kRequiredFeatures,
      .rhs_type = W::kType,
      // The coarser of the two formats (a lone row is Q8_0): what callers
      // and tests may assume about the activations' rounding.
      .lhs_type = gguf::GgmlType::Q8_0,
      .m_step = group_rows(),
      .n_step = panel_cols(),
      .rhs_packed_size = rhs_packed_size<W>,
      .rhs_packed_offset = rhs_packed_offset<W>,
      .pack_rhs = pack_rhs<W>,
      .lhs_packed_size = lhs_packed_size,
      .lhs_packed_offset = lhs_packed_offset,
      .pack_lhs = pack_lhs<W>,
      .run = run<W>,
  };
}

}  // namespace

MatmulKernel q4_0_kernel() { return kernel<Q4_0>(); }
MatmulKernel q8_0_kernel() { return kernel<Q8_0>(); }

}  // namespace kernels::sme
