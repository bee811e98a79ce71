// hwy tier: F32, F16 and BF16 weights times F32 activations, every Highway
// target.
//
//   matmul_f32_f32_f32_8x32_hwy  matmul_f32_f32_f16_8x32_hwy  matmul_f32_f32_bf16_8x32_hwy
//
// Contract (kernels/matmul.h): m_step 1, n_step 16 (kRows). pack_rhs
// interleaves 16 weight rows per group, element by element: group g holds
// w[16g + r][k] at [k][r], so one load at k is the 16 rows' weights (F16: 32
// bytes). Same bytes as the GGUF rows; rows past n are zero. pack_lhs copies
// the F32 activations.
//
// Outer-product form: out[i][row] += x[i][k] * w[row][k], one fused
// multiply-add per k in order, lanes = weight rows, the activation broadcast.
// Every output is the same chain of FMAs whatever the tile, so the result does
// not depend on where a row falls in a tile or a split, and no horizontal sum
// is needed. Error: one rounding per k (at most k 2^-24 sum |w x|, within the
// tier harness's (k + 16) 2^-23 bound).
//
// Prefill computes kTileM activation rows x kTileG groups at a time (AVX-512:
// 8 x 32 outputs, 16 accumulators, the "8x32" of the names; AVX2 4 x 16, SSE4
// 2 x 16): per k, kTileG weight vectors widened once, kTileM broadcasts,
// kTileM * kTileG FMAs; K in passes of kBlockK, so a pass's weights stay in L1
// for the kChunkM activation rows it serves. F16 and BF16 weights are widened
// to F32 once per pass, not once per tile, while the next pass's weights are
// prefetched: 1 thread, M128 x N4096 x K4096, best of 5 alternating runs,
// 114 GOP/s widening in every tile, 124 once per pass, 129 with the prefetch
// (TinyLlama F16 pp128 at 2 threads: 102-109 -> 112-124 t/s).
// Decode (m = 1) runs kDecodeG
// groups at once: that many 16-row streams and independent FMA chains, each
// load also prefetching the weights kPrefetchAhead bytes on (dot-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/hwy/matmul_float.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h first, then highway.h and the -inl headers.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/hwy/dispatch.h"
#include "kernels/hwy/dot-inl.h"
#include "kernels/hwy/kernel_defs.h"
#include "kernels/hwy/layout.h"

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

using gguf::GgmlType;

// Tiles by vector width (accumulators = kTileM * kTileG * vectors per group,
// within the register file with room for the weights and a broadcast).
constexpr size_t kVectorsPerGroup = kRows * sizeof(float) / HWY_MIN(HWY_MAX_BYTES, 64);
constexpr size_t kTileM = kVectorsPerGroup == 1 ? 8 : kVectorsPerGroup == 2 ? 4 : 2;
constexpr size_t kTileG = kVectorsPerGroup == 1 ? 2 : 1;
constexpr size_t kDecodeG = 4;   // groups (16-row streams) per decode pass
constexpr size_t kChunkM = 64;   // activation rows per pass over the weights
constexpr size_t kBlockK = 128;  // prefill: K per pass over the rows

template <GgmlType W>
struct Weights;
template <>
struct Weights<GgmlType::F32> {
  using T = float;
  static VF Load(const T* p) { return hn::LoadU(DF(), p); }
};
template <>
struct Weights<GgmlType::F16> {
  using T = uint16_t;
  static VF Load(const T* p) {
    const hn::Rebind<::hwy::float16_t, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const ::hwy::float16_t*>(p)));
  }
};
template <>
struct Weights<GgmlType::BF16> {
  using T = uint16_t;
  static VF Load(const T* p) {
    const hn::Rebind<::hwy::bfloat16_t, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const ::hwy::bfloat16_t*>(p)));
  }
};

// kM activation rows (x, row stride k) against kG groups of weights over
// k0..k1 of K: w points at k0 of the first group, groups group_stride
// elements apart. The accumulators start at zero (k0 == 0) or from `partial`
// (row stride partial_stride), and end in dst (k1 == k: dst[i * dst_stride +
// 16 g + lane], the first n_valid columns) or back in `partial`. Splitting K
// this way leaves the FMA chain of every output exactly the same.
template <typename Wt, size_t kM, size_t kG>
HWY_INLINE void Tile(size_t k, size_t k0, size_t k1, const float* x, const typename Wt::T* w, size_t group_stride,
                     float* partial, size_t partial_stride, float* dst, size_t dst_stride, size_t n_valid) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const size_t per_group = kRows / lanes;  // vectors per group on this target
  for (size_t v = 0; v < per_group; ++v) {
    if (v * lanes >= n_valid) break;
    VF acc[kM][kG];
    for (size_t i = 0; i < kM; ++i) {
      for (size_t g = 0; g < kG; ++g) {
        acc[i][g] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, partial + i * partial_stride + g * kRows + v * lanes);
      }
    }
    const typename Wt::T* wv = w + v * lanes;
    for (size_t kk = k0; kk < k1; ++kk, wv += kRows) {
      VF wg[kG];
      for (size_t g = 0; g < kG; ++g) {
        // Decode streams the weights from DRAM: ask for them kPrefetchAhead
        // bytes early (dot-inl.h; F16 at 1 thread 11.2-12.3 -> 13.2-14.4 GB/s).
        if constexpr (kM == 1) PrefetchAhead(reinterpret_cast<const uint8_t*>(wv + g * group_stride), kPrefetchAhead);
        wg[g] = Wt::Load(wv + g * group_stride);
      }
      for (size_t i = 0; i < kM; ++i) {
        const VF xi = hn::Set(df, x[i * k + kk]);
        for (size_t g = 0; g < kG; ++g) acc[i][g] = hn::MulAdd(wg[g], xi, acc[i][g]);
      }
    }
    for (size_t i = 0; i < kM; ++i) {
      for (size_t g = 0; g < kG; ++g) {
        const size_t col = g * kRows + v * lanes;
        if (col >= n_valid) continue;
        if (k1 == k) {
          StoreFirst(acc[i][g], n_valid - col, dst + i * dst_stride + col);
        } else {
          hn::StoreU(acc[i][g], df, partial + i * partial_stride + col);
        }
      }
    }
  }
}

template <GgmlType W>
HWY_INLINE void RunFloat(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                         size_t dst_stride) {
  using Wt = Weights<W>;
  using T = typename Wt::T;
  const auto* x = static_cast<const float*>(lhs_packed);
  const auto* w = static_cast<const T*>(rhs_packed);
  const size_t groups_n = groups(n);
  const size_t group = kRows * k;  // elements per group
  if (m == 1) {  // decode: whole K per pass, kDecodeG groups at a time
    size_t g = 0;
    for (; g + kDecodeG <= groups_n; g += kDecodeG) {
      Tile<Wt, 1, kDecodeG>(k, 0, k, x, w + g * group, group, nullptr, 0, dst + g * kRows, dst_stride, n - g * kRows);
    }
    for (; g < groups_n; ++g) {
      Tile<Wt, 1, 1>(k, 0, k, x, w + g * group, group, nullptr, 0, dst + g * kRows, dst_stride, n - g * kRows);
    }
    return;
  }
  // Prefill: kChunkM rows x kTileG groups at a time, K in blocks of kBlockK so
  // a block of weights stays in L1 for all the rows; partial sums between
  // blocks wait in `partial`.
  constexpr size_t kPartialStride = kRows * kTileG;
  HWY_ALIGN float partial[kChunkM * kPartialStride];
  for (size_t m0 = 0; m0 < m; m0 += kChunkM) {
    const size_t m1 = std::min(m, m0 + kChunkM);
    for (size_t g = 0; g < groups_n; g += kTileG) {
      const size_t g_count = std::min(kTileG, groups_n - g);
      for (size_t k0 = 0; k0 < k; k0 += kBlockK) {
        const size_t k1 = std::min(k, k0 + kBlockK);
        const T* wk = w + g * group + k0 * kRows;
        size_t i = m0;
        if constexpr (sizeof(T) == 2) {
          // The pass's F16 / BF16 weights widened once into wide[] for all its
          // rows, instead of once per tile.
          HWY_ALIGN float wide[kBlockK * kRows * kTileG];
          const DF df;
          const size_t span = (k1 - k0) * kRows;
          for (size_t h = 0; h < g_count; ++h) {
            for (size_t e = 0; e < span; e += hn::Lanes(df)) {
              __builtin_prefetch(wk + h * group + e + span, 0, 3);  // the next pass's weights
              hn::Store(Wt::Load(wk + h * group + e), df, wide + h * span + e);
            }
          }
          using W32 = Weights<GgmlType::F32>;
          for (; i + kTileM <= m1; i += kTileM) {
            float* p = partial + (i - m0) * kPartialStride;
            float* out = dst + i * dst_stride + g * kRows;
            if (g_count == kTileG) {
              Tile<W32, kTileM, kTileG>(k, k0, k1, x + i * k, wide, span, p, kPartialStride, out, dst_stride, n - g * kRows);
            } else {
              Tile<W32, kTileM, 1>(k, k0, k1, x + i * k, wide, span, p, kPartialStride, out, dst_stride, n - g * kRows);
            }
          }
        }
        for (; i + kTileM <= m1; i += kTileM) {
          float* p = partial + (i - m0) * kPartialStride;
          float* out = dst + i * dst_stride + g * kRows;
          if (g_count == kTileG) {
            Tile<Wt, kTileM, kTileG>(k, k0, k1, x + i * k, wk, group, p, kPartialStride, out, dst_stride, n - g * kRows);
          } else {
            Tile<Wt, kTileM, 1>(k, k0, k1, x + i * k, wk, group, p, kPartialStride, out, dst_stride, n - g * kRows);
          }
        }
        for (; i < m1; ++i) {
          for (size_t h = 0; h < g_count; ++h) {
            Tile<Wt, 1, 1>(k, k0, k1, x + i * k, wk + h * group, group, partial + (i - m0) * kPartialStride + h * kRows,
                           kPartialStride, dst + i * dst_stride + (g + h) * kRows, dst_stride, n - (g + h) * kRows);
          }
        }
      }
    }
  }
}

ENGINE_HWY_TARGET_RUN(RunF32, RunFloat<GgmlType::F32>)
ENGINE_HWY_TARGET_RUN(RunF16, RunFloat<GgmlType::F16>)
ENGINE_HWY_TARGET_RUN(RunBF16, RunFloat<GgmlType::BF16>)

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {
namespace {

ENGINE_HWY_RUN(RunF32, run_f32)
ENGINE_HWY_RUN(RunF16, run_f16)
ENGINE_HWY_RUN(RunBF16, run_bf16)

// Scalar repacking, once at load: w[16g + r][k] to group g at [k][r]. T is
// the element's bits (uint32_t for F32, uint16_t for F16 and BF16).
template <typename T>
void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const auto* in = static_cast<const T*>(rhs);
  auto* out = static_cast<T*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g, out += kRows * k) {
    const size_t rows = std::min(kRows, n - g * kRows);
    if (rows < kRows) std::memset(out, 0, kRows * k * sizeof(T));
    for (size_t k0 = 0; k0 < k; k0 += 64) {  // 64 x 16 tiles: the stores stay in L1
      const size_t k1 = std::min(k, k0 + 64);
      for (size_t r = 0; r < rows; ++r) {
        const T* row = in + (g * kRows + r) * k;
        for (size_t kk = k0; kk < k1; ++kk) out[kk * kRows + r] = row[kk];
      }
    }
  }
}

// lhs: (m, lhs_stride) floats to m rows of k floats.
void pack_lhs_f32(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<float*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) std::memcpy(out + i * k, lhs + i * lhs_stride, k * sizeof(float));
}

// A float type of kBytes per element: groups of [k][kRows] elements.
template <size_t kBytes>
constexpr MatmulKernel kernel(const char* name, gguf::GgmlType type, RunFn run) {
  return group_kernel<1, kRows * kBytes, sizeof(float)>(
      name, type, gguf::GgmlType::F32, pack_rhs<std::conditional_t<kBytes == 4, uint32_t, uint16_t>>, pack_lhs_f32, run);
}

}  // namespace

constinit const MatmulKernel kMatmulF32 = kernel<4>("matmul_f32_f32_f32_8x32_hwy", gguf::GgmlType::F32, run_f32);
constinit const MatmulKernel kMatmulF16 = kernel<2>("matmul_f32_f32_f16_8x32_hwy", gguf::GgmlType::F16, run_f16);
constinit const MatmulKernel kMatmulBF16 = kernel<2>("matmul_f32_f32_bf16_8x32_hwy", gguf::GgmlType::BF16, run_bf16);

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
