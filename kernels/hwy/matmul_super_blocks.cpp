// hwy tier: Q4_K, Q5_K and Q6_K weights times Q8_K activations, every Highway
// target.
//
//   matmul_f32_q8_k_q4_k_4x16_hwy   matmul_f32_q8_k_q5_k_4x16_hwy   matmul_f32_q8_k_q6_k_4x16_hwy
//   matmul_f32_q8_k_iq4_xs_4x16_hwy
//
// Contract (kernels/matmul.h): m_step 1, n_step 16 (kRows). pack_rhs
// interleaves 16 weight rows per group, one chunk per super-block of 256
// (layout.h): Q6_K 3360 B, the size of the 16 GGUF blocks; Q4_K 2368 B and
// Q5_K 2880 B, 64 B (2.8%, 2.3%) more, because their 6-bit scales and mins are
// stored unpacked, one byte each, so that they load straight into vectors.
// pack_lhs is the Q8_K quantizer of quantize.cpp (LhsQ8K: codes, scale, sums
// of 16 and of 32).
//
// Per super-block and output, the reference's sums:
//   Q4_K, Q5_K: sum = sum_s sc_s * (codes . a over sub-block s of 32), codes
//         0..15 / 0..31 (nibble + fifth bit); mins = sum_s m_s * (sum of a
//         over s), as m . pair_lo + 128 m . pair_hi
//   Q6_K: sum = sum_s sc_s * (codes . a - 32 * (sum of a)) over 16 sub-blocks
//         of 16, codes 0..63 from the 3 planes of layout.h; the -32 * sum
//         from the activations' offset16
//   IQ4_XS: sum = sum_s (ls_s - 32) * (values . a - 128 * (sum of a)) over 8
//         sub-blocks of 32, values the code book's + 128 (kIQ4Unsigned, layout.h) looked
//         up from the nibbles with a byte shuffle, full bytes (the portable dot)
// Each sub-block's dot product and mins are exact int32; the scales sc_s are
// applied in float, one fused multiply-add per sub-block (a convert and an FMA
// where vpmulld and an add took three uops), then the reference's terms
// (d_w d_a) sum - (dmin_w d_a) mins, or (d_w d_a) sum for Q6_K, super-blocks
// in order, each added with a fused multiply-add (hwy_targets_test bounds the
// difference to the reference; decode and prefill add the same terms in the
// same order, so results do not depend on the batch). Lanes are rows (see
// matmul_blocks.cpp).
//
// Decode streams each group once, 16 rows in flight; prefill passes over K in
// L1-sized pieces with kTileM activation rows per weight block loaded
// (RunGroups in groups-inl.h): on AVX-512 6 for Q4_K / Q5_K and 8 for Q6_K,
// whose prefill tile takes one quarter of a half-block at a time. One core,
// M128 x N4096 x K4096, best of 6 alternating runs: Q4_K 325 -> 379 GOP/s,
// Q5_K 235 -> 265, Q6_K 200 -> 294.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/hwy/matmul_super_blocks.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h first, then highway.h and the -inl headers.
#include <cstring>
#include <initializer_list>

#include "hwy/highway.h"
#include "kernels/hwy/dispatch.h"
#include "kernels/hwy/dot-inl.h"
#include "kernels/hwy/groups-inl.h"
#include "kernels/hwy/kernel_defs.h"
#include "kernels/hwy/layout.h"
#include "kernels/ref/blocks.h"

// Offsets inside a chunk (layout.h); once, not per target.
#ifndef ENGINE_KERNELS_HWY_Q8_K_OFFSETS
#define ENGINE_KERNELS_HWY_Q8_K_OFFSETS
namespace kernels::hwy_tier {
// Q4_K (kQ5 = false) and Q5_K (kQ5 = true): the Q5_K fifth bits sit after the
// nibbles, the rest shifts by their 512 bytes.
template <bool kQ5>
struct OffsetChunk {
  static constexpr size_t kQh = 2048;  // Q5_K only
  static constexpr size_t kScales = kQ5 ? 2560 : 2048;
  static constexpr size_t kMins = kScales + 128;
  static constexpr size_t kD = kMins + 128;
  static constexpr size_t kDmin = kD + 32;
  static constexpr size_t kBytes = kDmin + 32;
};
static_assert(OffsetChunk<false>::kBytes == kQ4_KChunk && OffsetChunk<true>::kBytes == kQ5_KChunk);
namespace q6_k {
// Three planes of 6-bit codes (layout.h), kPlane bytes apart.
inline constexpr size_t kPlane = 1024, kScales = 3072, kD = 3328;
}  // namespace q6_k
// IQ4_XS 2208 B: qs [s 8][j 4][r 16][4] (bytes 16s+4j.. of each row's qs),
// scales [s 8][r 16] as int8 ls - 32, d [r] f16 (+32 B, 1.5%).
namespace iq4_xs {
inline constexpr size_t kScales = 2048, kD = 2176, kBytes = 2208;
}  // namespace iq4_xs
}  // namespace kernels::hwy_tier
#endif

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

// The 6/8-bit per-row scales of sub-block s, as int32 lanes.
HWY_INLINE VI32 LoadScalesU8(const uint8_t* p) {
  return hn::PromoteTo(DI32(), hn::LoadU(hn::Rebind<uint8_t, DI32>(), p));
}
HWY_INLINE VI32 LoadScalesI8(const uint8_t* p) {
  return hn::PromoteTo(DI32(), hn::LoadU(hn::Rebind<int8_t, DI32>(), reinterpret_cast<const int8_t*>(p)));
}

// Activation rows per pass over a group: 6 where there are 32 vector registers
// (AVX-512: per row a low and a high dot product, a float sum and the
// accumulator, 24 in all), 4 elsewhere.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kOffsetTileM = 6;
#else
constexpr size_t kOffsetTileM = 4;
#endif

// Q4_K and Q5_K weights: see RunGroups (groups-inl.h).
template <bool kQ5>
struct OffsetFamily {
  using Lhs = LhsQ8K;
  using Off = OffsetChunk<kQ5>;
  static constexpr size_t kChunk = Off::kBytes;
  static constexpr size_t kTileM = kOffsetTileM;  // activation rows per pass over a group

  // Super-block b (at chunk) for rows v*l32.. of the group: acc[r] += its terms.
  template <size_t kM>
  static HWY_INLINE void Block(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, VF* acc) {
    const DU8 du8;
    const DU16 du16;
    const DI32 di32;
    const DF df;
    const size_t l8 = hn::Lanes(du8), l32 = hn::Lanes(di32);
    for (size_t off : {Off::kScales, Off::kScales + 64, Off::kD}) PrefetchAhead(chunk + off, kPrefetchAhead);
    VF sum[kM];  // sum over the sub-blocks s of sc_s x (codes . a), in float
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::Zero(df);
    for (size_t c = 0; c < 4; ++c) {  // sub-blocks 2c (low nibbles) and 2c+1 (high)
      DotAcc lo[kM], hi[kM];
      for (size_t r = 0; r < kM; ++r) lo[r] = hi[r] = DotStart(hn::Zero(di32));
      for (size_t j = 0; j < 8; ++j) {
        const VU8 packed = LoadAndPrefetch(chunk + (8 * c + j) * 64 + v * l8, kPrefetchAhead);
        VU8 wl = LowNibbles(packed), wh = HighNibbles(packed);
        if constexpr (kQ5) {  // bit 4: bits 2c (sub-block 2c) and 2c+1 of the qh byte
          const auto qh = hn::ShiftRightSame(
              hn::BitCast(du16, LoadAndPrefetch(chunk + Off::kQh + 64 * j + v * l8, kPrefetchAhead)),
              static_cast<int>(2 * c));
          wl = hn::OrAnd(wl, hn::BitCast(du8, hn::ShiftLeft<4>(qh)), hn::Set(du8, 0x10));
          wh = hn::OrAnd(wh, hn::BitCast(du8, hn::ShiftLeft<3>(qh)), hn::Set(du8, 0x10));
        }
        // Q4_K: the 8 products of a sub-block all pending (4-bit codes).
        // Q5_K's 5-bit codes would need a widening half way, and the
        // int32 sums it keeps live beside the pending int16 ones spill on
        // AVX2 (16 registers): Q5_K prefill went 95 -> 85 GOP/s.
        static_assert(DotPendingMax(15) >= 8);
        for (size_t r = 0; r < kM; ++r) {
          const int8_t* a = lhs[r * nb + b].qs + 64 * c + 4 * j;
          if constexpr (kQ5) {
            DotSmall(lo[r], wl, a);
            DotSmall(hi[r], wh, a + 32);
          } else {
            DotSmallPending(lo[r], wl, a);
            DotSmallPending(hi[r], wh, a + 32);
          }
        }
      }
      const VF sc_lo = hn::ConvertTo(df, LoadScalesU8(chunk + Off::kScales + 2 * c * kRows + v * l32));
      const VF sc_hi = hn::ConvertTo(df, LoadScalesU8(chunk + Off::kScales + (2 * c + 1) * kRows + v * l32));
      for (size_t r = 0; r < kM; ++r) {
        sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(lo[r])), sc_lo, sum[r]);
        sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(hi[r])), sc_hi, sum[r]);
      }
    }
    const VU8 m_lo = LoadAndPrefetch(chunk + Off::kMins + v * l8, kPrefetchAhead);       // m 0..3 of each row
    const VU8 m_hi = LoadAndPrefetch(chunk + Off::kMins + 64 + v * l8, kPrefetchAhead);  // m 4..7
    const VF dw = LoadHalfScales(chunk + Off::kD + 2 * v * l32);
    const VF dminw = LoadHalfScales(chunk + Off::kDmin + 2 * v * l32);
    for (size_t r = 0; r < kM; ++r) {
      const LhsQ8K& a = lhs[r * nb + b];
      DotAcc mins_lo = DotStart(hn::Zero(di32)), mins_hi = DotStart(hn::Zero(di32));
      DotSmall(mins_lo, m_lo, a.pair_lo);
      DotSmall(mins_lo, m_hi, a.pair_lo + 4);
      DotSmall(mins_hi, m_lo, a.pair_hi);
      DotSmall(mins_hi, m_hi, a.pair_hi + 4);
      const VI32 mins = hn::Add(DotFinish(mins_lo), hn::ShiftLeft<7>(DotFinish(mins_hi)));
      const VF d = hn::Mul(dw, hn::Set(df, a.d));
      const VF dmin = hn::Mul(dminw, hn::Set(df, a.d));
      acc[r] = hn::NegMulAdd(dmin, hn::ConvertTo(df, mins), hn::MulAdd(d, sum[r], acc[r]));
    }
  }
};

// The codes of the 4 quarters t of a 128-element half (elements 32t + 4j ..
// 4j+3 of each row) from the 3 planes' bytes (layout.h): quarters 0-2 are
// bits 0-5 of plane t, one and; quarter 3's code is spread over bits 6-7 of
// the three planes, and is gathered by masking those bits first, so that the
// 16-bit shifts move no bit across a byte. 11 operations per 4 code vectors,
// where the GGUF split (4 low bits, then 2 high bits of 4 codes in one byte)
// took 17. One AVX2 core (matmul_bench --cold_mib=0, best of 4 alternating
// runs, load average 4): decode 1x4096x4096 13.2 -> 15.9 weight GB/s, prefill
// M128 72 -> 86 GOP/s; decode with cold weights 11.1 -> 11.4 GB/s.
HWY_INLINE VU8 Q6Code(VU8 plane) { return hn::And(plane, hn::Set(DU8(), 0x3F)); }
HWY_INLINE VU8 Q6Code3(VU8 p0, VU8 p1, VU8 p2) {
  const DU8 du8;
  const DU16 du16;
  const VU8 top = hn::Set(du8, 0xC0);
  const auto b01 = hn::ShiftRight<6>(hn::BitCast(du16, hn::And(p0, top)));
  const auto b23 = hn::ShiftRight<4>(hn::BitCast(du16, hn::And(p1, top)));
  const auto b45 = hn::ShiftRight<2>(hn::BitCast(du16, hn::And(p2, top)));
  return hn::BitCast(du8, hn::Or(hn::Or(b01, b23), b45));
}

// Q6_K weights: see RunGroups (groups-inl.h).
struct Q6Family {
  using Lhs = LhsQ8K;
  static constexpr size_t kChunk = kQ6_KChunk;
  // Activation rows per pass over a group: 8 on AVX-512 (Quarter below keeps
  // one dot product, one float sum and the accumulator per row), 4 elsewhere.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  static constexpr size_t kTileM = 8;
#else
  static constexpr size_t kTileM = 4;
#endif

  // Half `half` of chunk c of super-block b (elements 128c + 16 half + 32t +
  // 0..15, t = 0..3: sub-blocks 8c + 2t + half) for one or two rows (decode):
  // each 64-byte load of low and high bits is unpacked once into the 4
  // quarters' codes. sum[r] += sc_s * (codes . a - 32 * sum of a) per
  // sub-block, t in order, in float.
  template <size_t kM>
  static HWY_INLINE void Half(const LhsQ8K* lhs, size_t nb, size_t b, size_t c, size_t half, const uint8_t* chunk,
                              size_t v, VF* sum) {
    using namespace q6_k;
    const DI32 di32;
    const DF df;
    const size_t l8 = hn::Lanes(DU8()), l32 = hn::Lanes(di32);
    DotAcc acc[kM][4];
    for (size_t r = 0; r < kM; ++r) {
      for (size_t t = 0; t < 4; ++t) {
        acc[r][t] = DotStart(hn::Set(di32, lhs[r * nb + b].offset16[8 * c + 2 * t + half]));
      }
    }
    for (size_t jj = 0; jj < 4; ++jj) {
      const size_t j = 4 * half + jj;
      const uint8_t* planes = chunk + (8 * c + j) * 64 + v * l8;
      const VU8 p0 = LoadAndPrefetch(planes, kPrefetchAhead);
      const VU8 p1 = LoadAndPrefetch(planes + kPlane, kPrefetchAhead);
      const VU8 p2 = LoadAndPrefetch(planes + 2 * kPlane, kPrefetchAhead);
      const VU8 w[4] = {Q6Code(p0), Q6Code(p1), Q6Code(p2), Q6Code3(p0, p1, p2)};
      // 4 products per sub-block, 6-bit codes: 2 pending at most.
      static_assert(DotPendingMax(63) >= 2);
      for (size_t r = 0; r < kM; ++r) {
        const int8_t* a = lhs[r * nb + b].qs + 128 * c + 4 * j;
        for (size_t t = 0; t < 4; ++t) {
          DotSmallPending(acc[r][t], w[t], a + 32 * t);
          if (jj == 1) DotWiden(acc[r][t]);
        }
      }
    }
    for (size_t t = 0; t < 4; ++t) {
      const VF sc = hn::ConvertTo(df, LoadScalesI8(chunk + kScales + (8 * c + 2 * t + half) * kRows + v * l32));
      for (size_t r = 0; r < kM; ++r) sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(acc[r][t])), sc, sum[r]);
    }
  }

  // The same sums for quarter kT of the half, for 3 or more rows (prefill):
  // one quarter at a time needs a quarter of Half's dot products in
  // registers, so 8 rows fit; quarter kT < 3 loads plane kT (and prefetches
  // its line), quarter 3 the three planes again from L1.
  template <size_t kM, size_t kT>
  static HWY_INLINE void Quarter(const LhsQ8K* lhs, size_t nb, size_t b, size_t c, size_t half, const uint8_t* chunk,
                                 size_t v, VF* sum) {
    using namespace q6_k;
    const DI32 di32;
    const DF df;
    const DU8 du8;
    const size_t l8 = hn::Lanes(du8), l32 = hn::Lanes(di32);
    DotAcc acc[kM];
    for (size_t r = 0; r < kM; ++r) acc[r] = DotStart(hn::Set(di32, lhs[r * nb + b].offset16[8 * c + 2 * kT + half]));
    for (size_t jj = 0; jj < 4; ++jj) {
      const size_t j = 4 * half + jj;
      const uint8_t* planes = chunk + (8 * c + j) * 64 + v * l8;
      VU8 w;
      if constexpr (kT < 3) {
        w = Q6Code(LoadAndPrefetch(planes + kT * kPlane, kPrefetchAhead));
      } else {
        w = Q6Code3(hn::LoadU(du8, planes), hn::LoadU(du8, planes + kPlane), hn::LoadU(du8, planes + 2 * kPlane));
      }
      for (size_t r = 0; r < kM; ++r) {  // 6-bit codes: 2 pending at most, as in Half
        DotSmallPending(acc[r], w, lhs[r * nb + b].qs + 128 * c + 4 * j + 32 * kT);
        if (jj == 1) DotWiden(acc[r]);
      }
    }
    const VF sc = hn::ConvertTo(df, LoadScalesI8(chunk + kScales + (8 * c + 2 * kT + half) * kRows + v * l32));
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(acc[r])), sc, sum[r]);
  }

  template <size_t kM>
  static HWY_INLINE void Block(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, VF* acc) {
    using namespace q6_k;
    const DI32 di32;
    const DF df;
    const size_t l32 = hn::Lanes(di32);
    for (size_t off = kScales; off < kChunk; off += 64) PrefetchAhead(chunk + off, kPrefetchAhead);
    VF sum[kM];
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::Zero(df);
    for (size_t c = 0; c < 2; ++c) {
      for (size_t half = 0; half < 2; ++half) {
        if constexpr (kM <= 2) {
          Half<kM>(lhs, nb, b, c, half, chunk, v, sum);
        } else {
          Quarter<kM, 0>(lhs, nb, b, c, half, chunk, v, sum);
          Quarter<kM, 1>(lhs, nb, b, c, half, chunk, v, sum);
          Quarter<kM, 2>(lhs, nb, b, c, half, chunk, v, sum);
          Quarter<kM, 3>(lhs, nb, b, c, half, chunk, v, sum);
        }
      }
    }
    const VF dw = LoadHalfScales(chunk + kD + 2 * v * l32);
    for (size_t r = 0; r < kM; ++r) acc[r] = hn::MulAdd(hn::Mul(dw, hn::Set(df, lhs[r * nb + b].d)), sum[r], acc[r]);
  }
};

// IQ4_XS weights: see RunGroups.
struct IQ4XSFamily {
  using Lhs = LhsQ8K;
  static constexpr size_t kChunk = iq4_xs::kBytes;
  static constexpr size_t kTileM = kOffsetTileM;

  template <size_t kM>
  static HWY_INLINE void Block(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, VF* acc) {
    const DU8 du8;
    const DI32 di32;
    const DF df;
    const size_t l8 = hn::Lanes(du8), l32 = hn::Lanes(di32);
    const VU8 book = hn::LoadDup128(du8, kIQ4Unsigned);
    PrefetchAhead(chunk + iq4_xs::kScales, kPrefetchAhead);
    VF sum[kM];  // sum over the sub-blocks s of (ls_s - 32) x (values . a), in float
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::Zero(df);
    for (size_t s = 0; s < 8; ++s) {
      DotAcc dot[kM];
      for (size_t r = 0; r < kM; ++r) {
        const LhsQ8K& a = lhs[r * nb + b];
        dot[r] = DotStart(hn::Set(di32, -128 * (128 * a.pair_hi[s] + a.pair_lo[s])));
      }
      for (size_t j = 0; j < 4; ++j) {
        const VU8 packed = LoadAndPrefetch(chunk + (4 * s + j) * 64 + v * l8, kPrefetchAhead);
        const VU8 lo = hn::TableLookupBytes(book, LowNibbles(packed));
        const VU8 hi = hn::TableLookupBytes(book, HighNibbles(packed));
        for (size_t r = 0; r < kM; ++r) {
          const int8_t* a = lhs[r * nb + b].qs + 32 * s + 4 * j;
          DotPortable(dot[r], lo, a);
          DotPortable(dot[r], hi, a + 16);
        }
      }
      const VF sc = hn::ConvertTo(df, LoadScalesI8(chunk + iq4_xs::kScales + s * kRows + v * l32));
      for (size_t r = 0; r < kM; ++r) sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(dot[r])), sc, sum[r]);
    }
    const VF dw = LoadHalfScales(chunk + iq4_xs::kD + 2 * v * l32);
    for (size_t r = 0; r < kM; ++r) acc[r] = hn::MulAdd(hn::Mul(dw, hn::Set(df, lhs[r * nb + b].d)), sum[r], acc[r]);
  }
};

template <class Family>
HWY_INLINE void RunSuperBlocks(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst,
                               size_t dst_stride) {
  RunGroups<Family>(m, n, k / ref::QK_K, static_cast<const LhsQ8K*>(lhs), static_cast<const uint8_t*>(rhs), dst,
                    dst_stride);
}

ENGINE_HWY_TARGET_RUN(RunQ4K, RunSuperBlocks<OffsetFamily<false>>)
ENGINE_HWY_TARGET_RUN(RunQ5K, RunSuperBlocks<OffsetFamily<true>>)
ENGINE_HWY_TARGET_RUN(RunQ6K, RunSuperBlocks<Q6Family>)
ENGINE_HWY_TARGET_RUN(RunIQ4XS, RunSuperBlocks<IQ4XSFamily>)

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {
namespace {

ENGINE_HWY_RUN(RunQ4K, run_q4_k)
ENGINE_HWY_RUN(RunQ5K, run_q5_k)
ENGINE_HWY_RUN(RunQ6K, run_q6_k)
ENGINE_HWY_RUN(RunIQ4XS, run_iq4_xs)

// Scalar repacking, once at load (the layout is the same for every target).
// Q4_K / Q5_K: nibbles and fifth bits 4 bytes per row at a time, the 6-bit
// scales and mins unpacked to bytes.
template <class Block, bool kQ5>
void pack_rhs_offset(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using Off = OffsetChunk<kQ5>;
  const size_t nb = k / ref::QK_K;
  const auto* rows = static_cast<const Block*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += Off::kBytes) {
      std::memset(out, 0, Off::kBytes);
      for (size_t r = 0; r < kRows && g * kRows + r < n; ++r) {
        const Block& blk = rows[(g * kRows + r) * nb + b];
        for (size_t c = 0; c < 4; ++c) {
          for (size_t j = 0; j < 8; ++j) std::memcpy(out + (8 * c + j) * 64 + 4 * r, blk.qs + 32 * c + 4 * j, 4);
        }
        if constexpr (kQ5) {
          for (size_t j = 0; j < 8; ++j) std::memcpy(out + Off::kQh + 64 * j + 4 * r, blk.qh + 4 * j, 4);
        }
        for (size_t s = 0; s < ref::kKSubBlocks; ++s) {
          uint8_t sc, m;
          ref::unpack_k_scale_min(blk.scales, s, sc, m);
          out[Off::kScales + s * kRows + r] = sc;
          out[Off::kMins + (s / 4) * 64 + 4 * r + s % 4] = m;
        }
        std::memcpy(out + Off::kD + 2 * r, &blk.d, 2);
        std::memcpy(out + Off::kDmin + 2 * r, &blk.dmin, 2);
      }
    }
  }
}

void pack_rhs_q6_k(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace q6_k;
  const size_t nb = k / ref::QK_K;
  const auto* rows = static_cast<const ref::BlockQ6_K*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kQ6_KChunk) {
      std::memset(out, 0, kQ6_KChunk);
      for (size_t r = 0; r < kRows && g * kRows + r < n; ++r) {
        const ref::BlockQ6_K& blk = rows[(g * kRows + r) * nb + b];
        for (size_t c = 0; c < 2; ++c) {
          for (size_t l = 0; l < 32; ++l) {  // element 4j + i of each quarter
            const size_t e = 128 * c + l;
            const unsigned code3 = ref::q6_k_code(blk, e + 96);
            for (size_t t = 0; t < 3; ++t) {
              out[t * kPlane + (8 * c + l / 4) * 64 + 4 * r + l % 4] =
                  static_cast<uint8_t>(ref::q6_k_code(blk, e + 32 * t) | ((code3 >> (2 * t)) & 3) << 6);
            }
          }
        }
        for (size_t s = 0; s < 16; ++s) out[kScales + s * kRows + r] = static_cast<uint8_t>(blk.scales[s]);
        std::memcpy(out + kD + 2 * r, &blk.d, 2);
      }
    }
  }
}

void pack_rhs_iq4_xs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace iq4_xs;
  const size_t nb = k / ref::QK_K;
  const auto* rows = static_cast<const ref::BlockIQ4_XS*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kBytes) {
      std::memset(out, 0, kBytes);
      for (size_t r = 0; r < kRows && g * kRows + r < n; ++r) {
        const ref::BlockIQ4_XS& blk = rows[(g * kRows + r) * nb + b];
        for (size_t s = 0; s < 8; ++s) {
          for (size_t j = 0; j < 4; ++j) std::memcpy(out + (4 * s + j) * 64 + 4 * r, blk.qs + 16 * s + 4 * j, 4);
          out[kScales + s * kRows + r] = static_cast<uint8_t>(static_cast<int>(ref::iq4_xs_scale(blk, s)) - 32);
        }
        std::memcpy(out + kD + 2 * r, &blk.d, 2);
      }
    }
  }
}

template <size_t kChunk>
constexpr MatmulKernel kernel(const char* name, gguf::GgmlType type, PackRhsFn pack_rhs, RunFn run) {
  return group_kernel<ref::QK_K, kChunk, sizeof(LhsQ8K)>(name, type, gguf::GgmlType::Q8_K, pack_rhs, pack_lhs_q8_k, run);
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_K = kernel<kQ4_KChunk>("matmul_f32_q8_k_q4_k_4x16_hwy", gguf::GgmlType::Q4_K,
                                                              pack_rhs_offset<ref::BlockQ4_K, false>, run_q4_k);
constinit const MatmulKernel kMatmulQ5_K = kernel<kQ5_KChunk>("matmul_f32_q8_k_q5_k_4x16_hwy", gguf::GgmlType::Q5_K,
                                                              pack_rhs_offset<ref::BlockQ5_K, true>, run_q5_k);
constinit const MatmulKernel kMatmulQ6_K =
    kernel<kQ6_KChunk>("matmul_f32_q8_k_q6_k_4x16_hwy", gguf::GgmlType::Q6_K, pack_rhs_q6_k, run_q6_k);
constinit const MatmulKernel kMatmulIQ4_XS =
    kernel<iq4_xs::kBytes>("matmul_f32_q8_k_iq4_xs_4x16_hwy", gguf::GgmlType::IQ4_XS, pack_rhs_iq4_xs, run_iq4_xs);

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
