// Activation packers of the hwy tier (pack_lhs): F32 rows to the Q8_0 (and
// Q8_1, same codes and d, plus s) and Q8_K codes and scales of the reference
// quantizers, bit for bit, plus the block sums the kernels use (layout.h:
// LhsQ8_0, LhsQ8K).
//
// Rounding, as kernels/ref: Q8_0 divides the block's |max| by 127 and rounds
// x / d half away from zero (roundf); Q8_K divides -127 by the signed element
// of largest magnitude (the first on ties) and rounds half to even (ggml's
// nearest_int), capping at 127. Both multiply by the inverse scale in float,
// exactly as the reference does, and no fused multiply-add is allowed in this
// file (-ffp-contract=off, CMakeLists.txt). A block with a non-finite input,
// or whose inverse scale overflows, is handed to the reference quantizer: its
// codes are the reference's by construction.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/hwy/quantize.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h first, then highway.h and the -inl headers.
#include <cmath>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/hwy/dot-inl.h"
#include "kernels/hwy/layout.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quants.h"

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

int64_t CurrentTarget() { return HWY_TARGET; }

// Largest |x| of n floats (n a multiple of the vector length), or -1 when one
// of them is not finite.
HWY_INLINE float AbsMaxOrMinusOne(const float* x, size_t n) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  VF amax = hn::Zero(df);
  auto finite = hn::IsFinite(hn::Zero(df));
  for (size_t i = 0; i < n; i += lanes) {
    const VF v = hn::LoadU(df, x + i);
    amax = hn::Max(amax, hn::Abs(v));
    finite = hn::And(finite, hn::IsFinite(v));
  }
  if (!hn::AllTrue(df, finite)) return -1.0f;
  return hn::GetLane(hn::MaxOfLanes(df, amax));
}

// x -> fp16 -> float, rounding to nearest even as ref::fp32_to_fp16 does:
// vcvtps2ph where the target has F16C (AVX2 and up); elsewhere the reference
// routine, lane by lane (Highway 1.0.3's emulated DemoteTo truncates).
HWY_INLINE void RoundTripHalf(const float* in, float* out, size_t n) {
#if HWY_TARGET <= HWY_AVX2
  const DF df;
  const hn::Rebind<::hwy::float16_t, DF> dh;
  for (size_t i = 0; i < n; i += hn::Lanes(df)) hn::Store(hn::PromoteTo(df, hn::DemoteTo(dh, hn::Load(df, in + i))), df, out + i);
#else
  for (size_t i = 0; i < n; ++i) out[i] = ref::fp16_to_fp32(ref::fp32_to_fp16(in[i]));
#endif
}

// The reference quantizer for one block whose maximum or inverse scale is not
// finite: its codes are the reference's by construction.
void QuantizeQ8_0BlockRef(const float* xb, int32_t offset, LhsQ8_0& o) {
  ref::BlockQ8_1 blk;  // Q8_0's codes and d, and s
  ref::quantize_row_q8_1(xb, &blk, 32);
  std::memcpy(o.qs, blk.qs, 32);
  o.d = ref::fp16_to_fp32(blk.d);
  int32_t sum = 0;
  for (int8_t q : blk.qs) sum += q;
  o.offset_sum = -offset * sum;
  o.s = ref::fp16_to_fp32(blk.s);
}

// Blocks kBatch at a time: the per-block scalars (d = amax / 127, its
// inverse, the fp16 roundings of d and of Q8_1's sum * d) are computed for
// the batch in vectors rather than block by block. With the 3-instruction
// roundf below, a row of 2048 took 1.05 us instead of 2.37 (AVX-512, one
// core); decode quantizes ~260 thousand activations per TinyLlama token.
void QuantizeQ8_0Row(size_t k, const float* x, int32_t offset, LhsQ8_0* out) {
  const DF df;
  const DI32 di32;
  const hn::Rebind<int8_t, DI32> di8_32;
  const size_t lanes = hn::Lanes(df);
  constexpr size_t kBatch = 16;
  HWY_ALIGN float amax[kBatch], d[kBatch], inverse[kBatch], d16[kBatch], sd[kBatch], sd16[kBatch];
  const size_t nb = k / 32;
  for (size_t b0 = 0; b0 < nb; b0 += kBatch) {
    const size_t n = HWY_MIN(kBatch, nb - b0);
    for (size_t j = 0; j < kBatch; ++j) amax[j] = j < n ? AbsMaxOrMinusOne(x + 32 * (b0 + j), 32) : 0.0f;
    for (size_t j = 0; j < kBatch; j += lanes) {
      const VF dj = hn::Div(hn::Load(df, amax + j), hn::Set(df, 127.0f));
      hn::Store(dj, df, d + j);
      const auto nonzero = hn::Ne(dj, hn::Zero(df));
      hn::Store(hn::IfThenElseZero(nonzero, hn::Div(hn::Set(df, 1.0f), hn::IfThenElse(nonzero, dj, hn::Set(df, 1.0f)))),
                df, inverse + j);
    }
    RoundTripHalf(d, d16, kBatch);
    for (size_t j = 0; j < n; ++j) {
      const float* xb = x + 32 * (b0 + j);
      LhsQ8_0& o = out[b0 + j];
      if (amax[j] < 0.0f || !std::isfinite(inverse[j])) {
        QuantizeQ8_0BlockRef(xb, offset, o);
        sd[j] = 0.0f;
        continue;
      }
      VI32 sum = hn::Zero(di32);
      for (size_t i = 0; i < 32; i += lanes) {
        const VF v = hn::Mul(hn::LoadU(df, xb + i), hn::Set(df, inverse[j]));
        // roundf (half away from zero): truncate v + copysign(0.5 - 2^-25, v).
        // The sum rounds up to the next integer exactly when v's fraction is
        // >= 1/2 (at a fraction of 1/2 it lies halfway and rounds to even, the
        // integer); exact for |v| < 2^23, and |v| <= 127.5 here.
        const VF r = hn::Trunc(hn::Add(v, hn::CopySign(hn::Set(df, 0.49999997f), v)));
        const VI32 q = hn::ConvertTo(di32, r);
        sum = hn::Add(sum, q);
        hn::StoreU(hn::DemoteTo(di8_32, q), di8_32, o.qs + i);
      }
      const int32_t total = hn::GetLane(hn::SumOfLanes(di32, sum));
      o.d = d16[j];
      o.offset_sum = -offset * total;
      sd[j] = static_cast<float>(total) * d[j];
    }
    for (size_t j = n; j < kBatch; ++j) sd[j] = 0.0f;
    RoundTripHalf(sd, sd16, kBatch);
    for (size_t j = 0; j < n; ++j) {
      if (!(amax[j] < 0.0f || !std::isfinite(inverse[j]))) out[b0 + j].s = sd16[j];
    }
  }
}

void QuantizeQ8KRow(size_t k, const float* x, LhsQ8K* out) {
  const DF df;
  const DI32 di32;
  const hn::Rebind<int8_t, DI32> di8_32;
  const size_t lanes = hn::Lanes(df);
  for (size_t b = 0; b < k / ref::QK_K; ++b) {
    const float* xb = x + ref::QK_K * b;
    LhsQ8K& o = out[b];
    const float amax = AbsMaxOrMinusOne(xb, ref::QK_K);
    size_t first = 0;  // the element of largest magnitude, the first on ties
    if (amax > 0.0f) {
      for (; first < ref::QK_K; first += lanes) {  // a vector at a time (a scalar scan took half the time)
        const intptr_t lane = hn::FindFirstTrue(df, hn::Eq(hn::Abs(hn::LoadU(df, xb + first)), hn::Set(df, amax)));
        if (lane >= 0) {
          first += static_cast<size_t>(lane);
          break;
        }
      }
    }
    const float iscale = amax > 0.0f ? -127.f / xb[first] : 0.0f;
    if (amax < 0.0f || !std::isfinite(iscale)) {
      ref::BlockQ8_K blk;
      ref::quantize_row_q8_k(xb, &blk, ref::QK_K);
      std::memcpy(o.qs, blk.qs, sizeof o.qs);
      o.d = blk.d;
    } else if (amax == 0.0f) {
      std::memset(o.qs, 0, sizeof o.qs);
      o.d = 0.0f;
    } else {
      for (size_t i = 0; i < ref::QK_K; i += lanes) {
        const VF v = hn::Mul(hn::Set(df, iscale), hn::LoadU(df, xb + i));
        const VI32 q = hn::Min(hn::NearestInt(v), hn::Set(di32, 127));  // ties to even
        hn::StoreU(hn::DemoteTo(di8_32, q), di8_32, o.qs + i);
      }
      o.d = 1 / iscale;
    }
    int32_t bsum16[16];
    const hn::Rebind<int8_t, DI32> di8;
    for (size_t g = 0; g < 16; ++g) {
      VI32 sum = hn::Zero(di32);
      for (size_t i = 16 * g; i < 16 * g + 16; i += lanes) sum = hn::Add(sum, hn::PromoteTo(di32, hn::LoadU(di8, o.qs + i)));
      bsum16[g] = hn::GetLane(hn::SumOfLanes(di32, sum));
      o.offset16[g] = -32 * bsum16[g];
      o.sum16_hi[g] = static_cast<int8_t>(bsum16[g] >> 7);  // |sum| <= 16 * 127: floor(sum / 128) in -16..15
      o.sum16_lo[g] = static_cast<int8_t>(bsum16[g] & 127);
    }
    for (size_t j = 0; j < 8; ++j) {
      const int32_t pair = bsum16[2 * j] + bsum16[2 * j + 1];  // |pair| <= 32 * 127
      o.pair_hi[j] = static_cast<int8_t>(pair >> 7);                // floor(pair / 128)
      o.pair_lo[j] = static_cast<int8_t>(pair & 127);
    }
  }
}

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {

HWY_EXPORT(CurrentTarget);
HWY_EXPORT(QuantizeQ8_0Row);
HWY_EXPORT(QuantizeQ8KRow);

int64_t dispatched_target() { return HWY_DYNAMIC_DISPATCH(CurrentTarget)(); }

template <int32_t kOffset>
void pack_lhs_q8_0(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* rows = static_cast<LhsQ8_0*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    HWY_DYNAMIC_DISPATCH(QuantizeQ8_0Row)(k, lhs + i * lhs_stride, kOffset, rows + i * (k / 32));
  }
}
template void pack_lhs_q8_0<0>(size_t, size_t, const float*, size_t, void*);
template void pack_lhs_q8_0<8>(size_t, size_t, const float*, size_t, void*);
template void pack_lhs_q8_0<16>(size_t, size_t, const float*, size_t, void*);
template void pack_lhs_q8_0<128>(size_t, size_t, const float*, size_t, void*);

void pack_lhs_q8_k(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* rows = static_cast<LhsQ8K*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    HWY_DYNAMIC_DISPATCH(QuantizeQ8KRow)(k, lhs + i * lhs_stride, rows + i * (k / ref::QK_K));
  }
}

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
