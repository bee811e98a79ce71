// matmul_f32_f32_f16_4x4_sve, matmul_f32_f32_bf16_4x4_sve and
// matmul_f32_f32_f32_4x4_sve: F16, BF16 or F32 weights x F32 activations, SVE
// FP32 FMA. One tile for the three types, over a weight loader (F16Weights,
// BF16Weights, F32Weights below).
//
// Features: SVE. Compiled with -march=armv8.2-a+sve. Vector-length agnostic:
// k advances by VL/32 floats, the tail under a WHILELT predicate.
//
// RHS: the GGUF rows as they are (pack_rhs = nullptr). F16: LD1H into the low
// half of each 32-bit lane, FCVT to fp32 (2 instructions per VL/32 weights);
// BF16: the same load, then LSL by 16 (a bf16 is the top half of an fp32, so
// widening is exact and needs no FEAT_BF16); F32: LD1W. LHS: F32 rows, copied.
//
// run: tiles of kMr = 4 activation rows x kNr = 4 weight rows; each output has
// one vector accumulator over k (lane l sums k = l mod VL/32), reduced with
// FADDV at the end. A single leftover row runs the same code with R = 1, the
// same float operations per output. m_step 4, n_step 4.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include "kernels/arm/interleaved.h"
#include "kernels/arm/sve/groups.h"
#include "kernels/arm/sve/kernel_defs.h"

namespace kernels::sve {
namespace {

constexpr size_t kMr = 4;
constexpr size_t kNr = 4;

struct F16Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::F16;
  using Elem = uint16_t;
  static svfloat32_t load(svbool_t pg, const Elem* p) {
    return svcvt_f32_f16_x(pg, svreinterpret_f16_u32(svld1uh_u32(pg, p)));
  }
};

struct BF16Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::BF16;
  using Elem = uint16_t;
  static svfloat32_t load(svbool_t pg, const Elem* p) {
    return svreinterpret_f32_u32(svlsl_n_u32_x(pg, svld1uh_u32(pg, p), 16));
  }
};

struct F32Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::F32;
  using Elem = float;
  static svfloat32_t load(svbool_t pg, const Elem* p) { return svld1_f32(pg, p); }
};

// R activation rows (x, stride k) x 4 weight rows (w0..w3; missing ones repeat
// a valid row and are not stored).
template <class W, int R, class E = typename W::Elem>
void tile(size_t k, const float* x, const E* w0, const E* w1, const E* w2, const E* w3, float* y, size_t ldy,
          size_t cols) {
  const svfloat32_t zero = svdup_f32(0);
#define DECL(i) [[maybe_unused]] svfloat32_t a##i##0 = zero, a##i##1 = zero, a##i##2 = zero, a##i##3 = zero;
  DECL(0)
  DECL(1)
  DECL(2)
  DECL(3)
#undef DECL
  for (size_t k0 = 0; k0 < k; k0 += svcntw()) {
    const svbool_t pg = svwhilelt_b32(static_cast<uint64_t>(k0), static_cast<uint64_t>(k));
    const svfloat32_t v0 = W::load(pg, w0 + k0), v1 = W::load(pg, w1 + k0);
    const svfloat32_t v2 = W::load(pg, w2 + k0), v3 = W::load(pg, w3 + k0);
#define ROW(i)                                              \
  {                                                         \
    const svfloat32_t xi = svld1_f32(pg, x + k * (i) + k0); \
    a##i##0 = svmla_f32_m(pg, a##i##0, xi, v0);             \
    a##i##1 = svmla_f32_m(pg, a##i##1, xi, v1);             \
    a##i##2 = svmla_f32_m(pg, a##i##2, xi, v2);             \
    a##i##3 = svmla_f32_m(pg, a##i##3, xi, v3);             \
  }
    SVE_ROWS(R, ROW)
#undef ROW
  }
  const svbool_t all = svptrue_b32();
#define ROW_STORE(i)                                \
  {                                                 \
    float* yi = y + ldy * (i);                      \
    yi[0] = svaddv_f32(all, a##i##0);               \
    if (cols > 1) yi[1] = svaddv_f32(all, a##i##1); \
    if (cols > 2) yi[2] = svaddv_f32(all, a##i##2); \
    if (cols > 3) yi[3] = svaddv_f32(all, a##i##3); \
  }
  SVE_ROWS(R, ROW_STORE)
#undef ROW_STORE
}

template <class W>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  using E = typename W::Elem;
  const auto* lhs = static_cast<const float*>(lhs_packed);
  const auto* rhs = static_cast<const E*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += kNr) {
    const size_t cols = n - n0 < kNr ? n - n0 : kNr;
    const E* w = rhs + n0 * k;
    const E* w1 = cols > 1 ? w + k : w;
    const E* w2 = cols > 2 ? w + 2 * k : w;
    const E* w3 = cols > 3 ? w + 3 * k : w;
    size_t m0 = 0;
    for (; m0 + kMr <= m; m0 += kMr)
      tile<W, 4>(k, lhs + m0 * k, w, w1, w2, w3, dst + m0 * dst_stride + n0, dst_stride, cols);
    for (; m0 < m; ++m0) tile<W, 1>(k, lhs + m0 * k, w, w1, w2, w3, dst + m0 * dst_stride + n0, dst_stride, cols);
  }
}

template <class W>
using Rows = arm::FloatRows<W::kType, typename W::Elem, kNr, kMr, run<W>>;

}  // namespace

constinit const MatmulKernel kMatmulF16 =
    arm::interleaved_kernel<Rows<F16Weights>>("matmul_f32_f32_f16_4x4_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulBF16 =
    arm::interleaved_kernel<Rows<BF16Weights>>("matmul_f32_f32_bf16_4x4_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulF32 =
    arm::interleaved_kernel<Rows<F32Weights>>("matmul_f32_f32_f32_4x4_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
