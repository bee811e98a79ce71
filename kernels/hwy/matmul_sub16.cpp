// hwy tier: Q6_K, Q3_K and Q2_K weights (16 sub-blocks of 16 per super-block
// of 256) times Q8_K activations, every Highway target: one family,
// Sub16Family<Codes>, the codes and scales of each type a Codes struct.
//
//   matmul_f32_q8_k_q6_k_4x16_hwy   matmul_f32_q8_k_q3_k_4x16_hwy   matmul_f32_q8_k_q2_k_4x16_hwy
//
// Contract (kernels/matmul.h): m_step 1, n_step 16 (kRows). pack_rhs
// interleaves 16 weight rows per group, one chunk per super-block (layouts
// below): Q6_K 3360 B and Q2_K 1344 B, the size of the 16 GGUF blocks; Q3_K
// 1824 B, 64 B (3.6%) more, its 6-bit scales unpacked to one byte each so that
// they load straight into vectors. pack_lhs is the Q8_K quantizer of
// quantize.cpp (LhsQ8K: codes, scale, sums of 16).
//
// Per super-block and output, the reference's sums over the 16 sub-blocks s:
//   Q6_K: sum = sum_s sc_s * (codes . a - 32 * (sum of a)), codes 0..63
//   Q3_K: sum = sum_s (sc_s - 32) * (codes . a - 4 * (sum of a)), codes 0..7
//   Q2_K: sum = sum_s sc_s * (codes . a), codes 0..3, sc_s 4-bit;
//         mins = sum_s m_s * (sum of a over s), as m . sum16_lo + 128 m . sum16_hi
// the offsets -32 and -4 start each sub-block's dot product from the
// activations' offset16 (-32 * sum, or an eighth of it). Each sub-block's dot
// product and the mins are exact int32; the scales are applied in float, one
// fused multiply-add per sub-block, then (d_w d_a) sum, minus (dmin_w d_a)
// mins for Q2_K, super-blocks in order, each with a fused multiply-add (as
// matmul_super_blocks.cpp: decode and prefill add the same terms in the same
// order; hwy_targets_test bounds the difference to the reference).
//
// Decode (one or two activation rows) unpacks each load of code bytes into
// the 4 quarters' codes at once (Half); prefill tiles of kTileM rows (8 on
// AVX-512, 4 elsewhere) take one quarter at a time (Quarter), so the dot
// products of 8 rows fit the registers.
//
// One AVX2 core (AMD EPYC, no AVX-512), matmul_bench against the ref kernels
// in the same run (docs/measurements/2026-12-04-hwy-q2k-q3k.md):
// decode 1 x 4096 x 4096, weights cold, and prefill M128 x 4096 x 4096 (ref:
// M8), best of 3 runs on a loaded machine (load average 5-7), GOP/s:
//   Q2_K decode ref 1.42 -> 66.5 (10.9 weight GB/s, a plain read 16-17),
//        prefill ref 1.41 -> 123
//   Q3_K decode ref 0.89 -> 54.7 (11.7 GB/s), prefill ref 0.90 -> 78.6
// Q6_K as before the family was shared (same run, alternating).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/hwy/matmul_sub16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h first, then highway.h and the -inl headers.
#include <cstring>

#include "hwy/highway.h"
#include "kernels/hwy/dispatch.h"
#include "kernels/hwy/dot-inl.h"
#include "kernels/hwy/groups-inl.h"
#include "kernels/hwy/kernel_defs.h"
#include "kernels/hwy/layout.h"
#include "kernels/ref/blocks.h"

// Offsets inside a chunk; once, not per target.
#ifndef ENGINE_KERNELS_HWY_SUB16_OFFSETS
#define ENGINE_KERNELS_HWY_SUB16_OFFSETS
namespace kernels::hwy_tier {
// Q6_K 3360 B (layout.h): three planes of 6-bit codes, kPlane bytes apart.
namespace q6_k {
inline constexpr size_t kPlane = 1024, kScales = 3072, kD = 3328;
}  // namespace q6_k
// Q3_K 1824 B: 3 planes [p 3][j 8][r 16][4] of the 3-bit codes q_u of
// elements 32u + 4j + i (u = 0..7, the 8 quarters): plane 0 holds q0 | q1 << 3
// | (q6 & 3) << 6, plane 1 q2 | q3 << 3 | (q7 & 3) << 6, plane 2 q4 | q5 << 3
// | (q6 >> 2) << 6 | (q7 >> 2) << 7; sc [s 16][r 16] as int8 sc - 32, d [r]
// f16 (+64 B, 3.6%, for the unpacked 6-bit scales). The GGUF split (2 low
// bits of 4 quarters in one byte, bit 2 of 8 in another) took 37 operations
// per 8 code vectors, these planes 19.
namespace q3_k {
inline constexpr size_t kPlane = 512, kScales = 1536, kD = 1792, kBytes = 1824;
}  // namespace q3_k
// Q2_K 1344 B, the size of the 16 GGUF blocks: qs [c 2][j 8][r 16][4]
// (bytes 32c+4j.. of each row's qs: the 2-bit codes of elements 128c + 32t
// + 4j + i in bits 2t, 2t+1, one shift and one and each), the scale bytes
// (sc | m << 4) [q 4][r 16][4] (bytes 4q.. of each row's scales: the 4 mins
// of an int32 lane make one dot product with the activations' 16-sums),
// d [r] f16, dmin [r] f16.
namespace q2_k {
inline constexpr size_t kScales = 1024, kD = 1280, kDmin = 1312, kBytes = 1344;
}  // namespace q2_k
}  // namespace kernels::hwy_tier
#endif

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

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

// The bytes of (c, j) in a chunk whose first part is [c 2][j 8][r 16][4]
// (Q6_K's plane 0, the Q2_K / Q3_K qs), for lane vector v.
HWY_INLINE const uint8_t* CodeBytes(const uint8_t* chunk, size_t c, size_t j, size_t v) {
  return chunk + (8 * c + j) * 64 + v * hn::Lanes(DU8());
}

// The d of each row (fp16) times the activations' d.
HWY_INLINE VF BlockScale(const uint8_t* d16, size_t v, const LhsQ8K& a) {
  return hn::Mul(LoadHalfScales(d16 + 2 * v * hn::Lanes(DF())), hn::Set(DF(), a.d));
}

// Scale and Finish of the types without mins (Q6_K, Q3_K): int8 scales
// [s 16][r 16] at kScales, d [r] f16 at kD; the block adds (d_w d_a) sum.
template <size_t kScales, size_t kD>
struct SignedScales {
  static HWY_INLINE VF Scale(const uint8_t* chunk, size_t s, size_t v) {
    return hn::ConvertTo(DF(), LoadScalesI8(chunk + kScales + s * kRows + v * hn::Lanes(DI32())));
  }
  template <size_t kM>
  static HWY_INLINE void Finish(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, const VF* sum,
                                VF* acc) {
    for (size_t r = 0; r < kM; ++r) acc[r] = hn::MulAdd(BlockScale(chunk + kD, v, lhs[r * nb + b]), sum[r], acc[r]);
  }
};

// Q6_K codes for Sub16Family: 0..63, offset 32 (the activations' offset16).
struct Q6Codes : SignedScales<q6_k::kScales, q6_k::kD> {
  static constexpr size_t kChunk = kQ6_KChunk;
  static constexpr int kMaxCode = 63;
  static HWY_INLINE int32_t Start(const LhsQ8K& a, size_t s) { return a.offset16[s]; }
  static HWY_INLINE void Prefetch(const uint8_t* chunk) {
    for (size_t off = q6_k::kScales; off < kChunk; off += 64) PrefetchAhead(chunk + off, kPrefetchAhead);
  }
  static HWY_INLINE void Codes4(const uint8_t* chunk, size_t c, size_t j, size_t v, VU8* w) {
    const uint8_t* planes = CodeBytes(chunk, c, j, v);
    const VU8 p0 = LoadAndPrefetch(planes, kPrefetchAhead);
    const VU8 p1 = LoadAndPrefetch(planes + q6_k::kPlane, kPrefetchAhead);
    const VU8 p2 = LoadAndPrefetch(planes + 2 * q6_k::kPlane, kPrefetchAhead);
    w[0] = Q6Code(p0), w[1] = Q6Code(p1), w[2] = Q6Code(p2), w[3] = Q6Code3(p0, p1, p2);
  }
  // Quarter kT < 3 loads plane kT (and prefetches its line), quarter 3 the
  // three planes again from L1.
  template <size_t kT>
  static HWY_INLINE VU8 Code(const uint8_t* chunk, size_t c, size_t j, size_t v) {
    const uint8_t* planes = CodeBytes(chunk, c, j, v);
    if constexpr (kT < 3) return Q6Code(LoadAndPrefetch(planes + kT * q6_k::kPlane, kPrefetchAhead));
    const DU8 du8;
    return Q6Code3(hn::LoadU(du8, planes), hn::LoadU(du8, planes + q6_k::kPlane),
                   hn::LoadU(du8, planes + 2 * q6_k::kPlane));
  }
};

// The 2-bit codes of quarter kT from the Q2_K / Q3_K qs bytes (bits 2kT,
// 2kT+1; the 16-bit shift's spill from the next byte is masked off).
template <size_t kT>
HWY_INLINE VU8 TwoBits(VU8 qs) {
  const DU8 du8;
  if constexpr (kT == 0) return hn::And(qs, hn::Set(du8, 3));
  return hn::And(hn::BitCast(du8, hn::ShiftRight<2 * kT>(hn::BitCast(DU16(), qs))), hn::Set(du8, 3));
}

// Q2_K codes for Sub16Family: 0..3, no offset; the mins in Finish.
struct Q2Codes {
  static constexpr size_t kChunk = q2_k::kBytes;
  static constexpr int kMaxCode = 3;
  static HWY_INLINE int32_t Start(const LhsQ8K&, size_t) { return 0; }
  static HWY_INLINE void Prefetch(const uint8_t* chunk) {
    for (size_t off = q2_k::kScales; off < kChunk; off += 64) PrefetchAhead(chunk + off, kPrefetchAhead);
  }
  static HWY_INLINE void Codes4(const uint8_t* chunk, size_t c, size_t j, size_t v, VU8* w) {
    const VU8 qs = LoadAndPrefetch(CodeBytes(chunk, c, j, v), kPrefetchAhead);
    w[0] = TwoBits<0>(qs), w[1] = TwoBits<1>(qs), w[2] = TwoBits<2>(qs), w[3] = TwoBits<3>(qs);
  }
  template <size_t kT>
  static HWY_INLINE VU8 Code(const uint8_t* chunk, size_t c, size_t j, size_t v) {
    const uint8_t* p = CodeBytes(chunk, c, j, v);
    return TwoBits<kT>(kT == 0 ? LoadAndPrefetch(p, kPrefetchAhead) : hn::LoadU(DU8(), p));
  }
  // The low nibble of byte s % 4 of each row's int32 lane.
  static HWY_INLINE VF Scale(const uint8_t* chunk, size_t s, size_t v) {
    const DI32 di32;
    const VI32 bytes = hn::BitCast(di32, hn::LoadU(DU8(), chunk + q2_k::kScales + 64 * (s / 4) + v * hn::Lanes(DU8())));
    return hn::ConvertTo(DF(), hn::And(hn::ShiftRightSame(bytes, static_cast<int>(8 * (s % 4))), hn::Set(di32, 15)));
  }
  // mins = sum_s m_s * (sum of a over s): the high nibbles of the scale
  // bytes, 4 sub-blocks per int32 lane, times the activations' 16-sums as
  // sum16_lo + 128 sum16_hi; then d sum - dmin mins, as the reference.
  template <size_t kM>
  static HWY_INLINE void Finish(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, const VF* sum,
                                VF* acc) {
    const DF df;
    VU8 m[4];
    for (size_t q = 0; q < 4; ++q) m[q] = HighNibbles(hn::LoadU(DU8(), chunk + q2_k::kScales + 64 * q + v * hn::Lanes(DU8())));
    static_assert(DotPendingMax(15) >= 4);
    for (size_t r = 0; r < kM; ++r) {
      const LhsQ8K& a = lhs[r * nb + b];
      DotAcc lo = DotStart(hn::Zero(DI32())), hi = DotStart(hn::Zero(DI32()));
      for (size_t q = 0; q < 4; ++q) {
        DotSmallPending(lo, m[q], a.sum16_lo + 4 * q);
        DotSmallPending(hi, m[q], a.sum16_hi + 4 * q);
      }
      const VI32 mins = hn::Add(DotFinish(lo), hn::ShiftLeft<7>(DotFinish(hi)));
      acc[r] = hn::NegMulAdd(BlockScale(chunk + q2_k::kDmin, v, a), hn::ConvertTo(df, mins),
                             hn::MulAdd(BlockScale(chunk + q2_k::kD, v, a), sum[r], acc[r]));
    }
  }
};

// Q3_K codes for Sub16Family: 0..7, offset 4: the start is -4 * (sum of a)
// = offset16 / 8. Quarter u = 4c + t of position j (elements 32u + 4j + i)
// from the 3 planes of layout above: u < 6 in bits 0-2 or 3-5 of plane u / 2,
// u = 6, 7 gathered from bits 6-7 of plane u - 6 and bit 6 or 7 of plane 2.
struct Q3Codes : SignedScales<q3_k::kScales, q3_k::kD> {
  static constexpr size_t kChunk = q3_k::kBytes;
  static constexpr int kMaxCode = 7;
  static HWY_INLINE int32_t Start(const LhsQ8K& a, size_t s) { return a.offset16[s] / 8; }
  static HWY_INLINE void Prefetch(const uint8_t* chunk) {
    for (size_t off = q3_k::kScales; off < kChunk; off += 64) PrefetchAhead(chunk + off, kPrefetchAhead);
  }
  static HWY_INLINE const uint8_t* Planes(const uint8_t* chunk, size_t j, size_t v) {
    return chunk + 64 * j + v * hn::Lanes(DU8());
  }
  // Plane `plane` at p; kPrefetch on the one load of each line that asks for
  // it 8 KiB ahead (quarters 0, 2 and 4 load planes 0, 1 and 2 first).
  template <bool kPrefetch>
  static HWY_INLINE VU8 Load(const uint8_t* p, size_t plane) {
    if constexpr (kPrefetch) {
      return LoadAndPrefetch(p + plane * q3_k::kPlane, kPrefetchAhead);
    } else {
      return hn::LoadU(DU8(), p + plane * q3_k::kPlane);
    }
  }
  template <size_t kShift>
  static HWY_INLINE VU8 Bits(VU8 b, uint8_t mask) {
    return hn::And(hn::BitCast(DU8(), hn::ShiftRight<kShift>(hn::BitCast(DU16(), b))), hn::Set(DU8(), mask));
  }
  static HWY_INLINE VU8 Low3(VU8 b) { return hn::And(b, hn::Set(DU8(), 7)); }
  // Quarters 6 and 7: 2 low bits from plane kU - 6, bit 2 from plane 2.
  template <size_t kU>
  static HWY_INLINE VU8 Spread(VU8 low_plane, VU8 plane2) {
    return hn::Or(Bits<6>(low_plane, 3), Bits<kU - 2>(plane2, 4));
  }
  template <size_t kU>
  static HWY_INLINE VU8 QuarterCode(const uint8_t* p) {
    if constexpr (kU >= 6) {
      return Spread<kU>(Load<false>(p, kU - 6), Load<false>(p, 2));
    } else if constexpr (kU % 2 == 0) {
      return Low3(Load<true>(p, kU / 2));
    } else {
      return Bits<3>(Load<false>(p, kU / 2), 7);
    }
  }
  static HWY_INLINE void Codes4(const uint8_t* chunk, size_t c, size_t j, size_t v, VU8* w) {
    const uint8_t* p = Planes(chunk, j, v);
    if (c == 0) {
      const VU8 b0 = Load<true>(p, 0), b1 = Load<true>(p, 1);
      w[0] = Low3(b0), w[1] = Bits<3>(b0, 7), w[2] = Low3(b1), w[3] = Bits<3>(b1, 7);
    } else {
      const VU8 b2 = Load<true>(p, 2), b0 = Load<false>(p, 0), b1 = Load<false>(p, 1);
      w[0] = Low3(b2), w[1] = Bits<3>(b2, 7), w[2] = Spread<6>(b0, b2), w[3] = Spread<7>(b1, b2);
    }
  }
  template <size_t kT>
  static HWY_INLINE VU8 Code(const uint8_t* chunk, size_t c, size_t j, size_t v) {
    const uint8_t* p = Planes(chunk, j, v);
    return c == 0 ? QuarterCode<kT>(p) : QuarterCode<4 + kT>(p);
  }
};

// Q6_K, Q3_K and Q2_K weights (16 sub-blocks of 16, Codes as above): see
// RunGroups (groups-inl.h).
template <class Codes>
struct Sub16Family {
  using Lhs = LhsQ8K;
  static constexpr size_t kChunk = Codes::kChunk;
  // Activation rows per pass over a group: 8 on AVX-512 (Quarter below keeps
  // one dot product, one float sum and the accumulator per row), 4 elsewhere.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  static constexpr size_t kTileM = 8;
#else
  static constexpr size_t kTileM = 4;
#endif
  // 4 products per sub-block: Q6_K's 6-bit codes widen after 2, the 2- and
  // 3-bit codes never before DotFinish.
  static constexpr size_t kPending = DotPendingMax(Codes::kMaxCode);
  static_assert(kPending >= 2);
  static constexpr bool WidenAfter(size_t jj) { return (jj + 1) % kPending == 0 && jj + 1 < 4; }

  // Half `half` of chunk c of super-block b (elements 128c + 16 half + 32t +
  // 0..15, t = 0..3: sub-blocks 8c + 2t + half) for one or two rows (decode):
  // each load of code bytes is unpacked once into the 4 quarters' codes.
  // sum[r] += sc_s * (codes . a + Start) per sub-block, t in order, in float.
  template <size_t kM>
  static HWY_INLINE void Half(const LhsQ8K* lhs, size_t nb, size_t b, size_t c, size_t half, const uint8_t* chunk,
                              size_t v, VF* sum) {
    const DI32 di32;
    const DF df;
    DotAcc acc[kM][4];
    for (size_t r = 0; r < kM; ++r) {
      for (size_t t = 0; t < 4; ++t) acc[r][t] = DotStart(hn::Set(di32, Codes::Start(lhs[r * nb + b], 8 * c + 2 * t + half)));
    }
    for (size_t jj = 0; jj < 4; ++jj) {
      const size_t j = 4 * half + jj;
      VU8 w[4];
      Codes::Codes4(chunk, c, j, v, w);
      for (size_t r = 0; r < kM; ++r) {
        const int8_t* a = lhs[r * nb + b].qs + 128 * c + 4 * j;
        for (size_t t = 0; t < 4; ++t) {
          DotSmallPending(acc[r][t], w[t], a + 32 * t);
          if (WidenAfter(jj)) DotWiden(acc[r][t]);
        }
      }
    }
    for (size_t t = 0; t < 4; ++t) {
      const VF sc = Codes::Scale(chunk, 8 * c + 2 * t + half, v);
      for (size_t r = 0; r < kM; ++r) sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(acc[r][t])), sc, sum[r]);
    }
  }

  // The same sums for quarter kT of the half, for 3 or more rows (prefill):
  // one quarter at a time needs a quarter of Half's dot products in
  // registers, so 8 rows fit.
  template <size_t kM, size_t kT>
  static HWY_INLINE void Quarter(const LhsQ8K* lhs, size_t nb, size_t b, size_t c, size_t half, const uint8_t* chunk,
                                 size_t v, VF* sum) {
    const DI32 di32;
    const DF df;
    DotAcc acc[kM];
    for (size_t r = 0; r < kM; ++r) acc[r] = DotStart(hn::Set(di32, Codes::Start(lhs[r * nb + b], 8 * c + 2 * kT + half)));
    for (size_t jj = 0; jj < 4; ++jj) {
      const size_t j = 4 * half + jj;
      const VU8 w = Codes::template Code<kT>(chunk, c, j, v);
      for (size_t r = 0; r < kM; ++r) {
        DotSmallPending(acc[r], w, lhs[r * nb + b].qs + 128 * c + 4 * j + 32 * kT);
        if (WidenAfter(jj)) DotWiden(acc[r]);
      }
    }
    const VF sc = Codes::Scale(chunk, 8 * c + 2 * kT + half, v);
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::MulAdd(hn::ConvertTo(df, DotFinish(acc[r])), sc, sum[r]);
  }

  template <size_t kM>
  static HWY_INLINE void Block(const LhsQ8K* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, VF* acc) {
    Codes::Prefetch(chunk);
    VF sum[kM];
    for (size_t r = 0; r < kM; ++r) sum[r] = hn::Zero(DF());
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
    Codes::template Finish<kM>(lhs, nb, b, chunk, v, sum, acc);
  }
};

ENGINE_HWY_TARGET_RUN(RunQ6K, RunSuperBlocks<Sub16Family<Q6Codes>>)
ENGINE_HWY_TARGET_RUN(RunQ3K, RunSuperBlocks<Sub16Family<Q3Codes>>)
ENGINE_HWY_TARGET_RUN(RunQ2K, RunSuperBlocks<Sub16Family<Q2Codes>>)

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {
namespace {

ENGINE_HWY_RUN(RunQ6K, run_q6_k)
ENGINE_HWY_RUN(RunQ3K, run_q3_k)
ENGINE_HWY_RUN(RunQ2K, run_q2_k)

// Scalar repacking, once at load (the layout is the same for every target).
void pack_rhs_q6_k(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace q6_k;
  pack_groups<ref::BlockQ6_K, kQ6_KChunk>(n, k, rhs, rhs_packed, [](const ref::BlockQ6_K& blk, uint8_t* out, size_t r) {
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
  });
}

void pack_rhs_q3_k(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace q3_k;
  pack_groups<ref::BlockQ3_K, kBytes>(n, k, rhs, rhs_packed, [](const ref::BlockQ3_K& blk, uint8_t* out, size_t r) {
    for (size_t l = 0; l < 32; ++l) {  // position 4j + i of each quarter
      unsigned q[8];                    // the 3-bit code of element 32u + l
      for (size_t u = 0; u < 8; ++u) {
        q[u] = ((blk.qs[32 * (u / 4) + l] >> (2 * (u % 4))) & 3u) | ((blk.hmask[l] >> u) & 1u) << 2;
      }
      uint8_t* at = out + (l / 4) * 64 + 4 * r + l % 4;
      at[0] = static_cast<uint8_t>(q[0] | q[1] << 3 | (q[6] & 3) << 6);
      at[kPlane] = static_cast<uint8_t>(q[2] | q[3] << 3 | (q[7] & 3) << 6);
      at[2 * kPlane] = static_cast<uint8_t>(q[4] | q[5] << 3 | (q[6] >> 2) << 6 | (q[7] >> 2) << 7);
    }
    for (size_t s = 0; s < 16; ++s) {
      out[kScales + s * kRows + r] = static_cast<uint8_t>(static_cast<int>(ref::q3_k_scale(blk.scales, s)) - 32);
    }
    std::memcpy(out + kD + 2 * r, &blk.d, 2);
  });
}

void pack_rhs_q2_k(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace q2_k;
  pack_groups<ref::BlockQ2_K, kBytes>(n, k, rhs, rhs_packed, [](const ref::BlockQ2_K& blk, uint8_t* out, size_t r) {
    for (size_t c = 0; c < 2; ++c) {
      for (size_t j = 0; j < 8; ++j) std::memcpy(out + (8 * c + j) * 64 + 4 * r, blk.qs + 32 * c + 4 * j, 4);
    }
    for (size_t q = 0; q < 4; ++q) std::memcpy(out + kScales + 64 * q + 4 * r, blk.scales + 4 * q, 4);
    std::memcpy(out + kD + 2 * r, &blk.d, 2);
    std::memcpy(out + kDmin + 2 * r, &blk.dmin, 2);
  });
}

}  // namespace

constinit const MatmulKernel kMatmulQ6_K =
    q8_k_kernel<kQ6_KChunk>("matmul_f32_q8_k_q6_k_4x16_hwy", gguf::GgmlType::Q6_K, pack_rhs_q6_k, run_q6_k);
constinit const MatmulKernel kMatmulQ3_K =
    q8_k_kernel<q3_k::kBytes>("matmul_f32_q8_k_q3_k_4x16_hwy", gguf::GgmlType::Q3_K, pack_rhs_q3_k, run_q3_k);
constinit const MatmulKernel kMatmulQ2_K =
    q8_k_kernel<q2_k::kBytes>("matmul_f32_q8_k_q2_k_4x16_hwy", gguf::GgmlType::Q2_K, pack_rhs_q2_k, run_q2_k);

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
