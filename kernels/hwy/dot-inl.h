// Per-target building blocks of the hwy integer kernels (re-included once per
// Highway target by foreach_target.h, hence the toggling include guard).
//
// The one integer primitive is vpdpbusd's: each int32 lane accumulates the 4
// products of its 4 unsigned weight bytes with 4 signed activation bytes.
// Highway 1.0.3 has no int8 dot product, so each target gets its own:
// - AVX3_DL: vpdpbusd itself, the activation bytes an embedded broadcast
//   operand (DotVnniAt).
//   Highway 1.0.3's AVX3_DL attribute string names "avxvnni" but not
//   "avx512vnni", although its run-time check requires AVX512-VNNI (cpuid 7
//   ecx bit 11), so every per-target section adds that attribute for this
//   target (vnni_target.h).
// - AVX2, AVX3: vpmaddubsw + vpmaddwd (unsigned x signed byte pairs to int16,
//   then pairs of int16 to int32). The int16 step saturates, so this path
//   needs weights <= 128 (every 4- to 6-bit code, the K scales and mins); full
//   bytes (Q8_0's code + 128) take the portable path.
// - everything else (SSE4 here; NEON, PPC8, WASM elsewhere): portable Highway,
//   bytes split into even and odd int16 lanes and multiplied pairwise into
//   int32 with ReorderWidenMulAccumulate, rearranged at the end. SSE4 runs
//   this path on x86, so the per-target test covers it on this machine.
// All three give the same exact int32 sums.

#if defined(ENGINE_KERNELS_HWY_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ENGINE_KERNELS_HWY_DOT_INL_H_
#undef ENGINE_KERNELS_HWY_DOT_INL_H_
#else
#define ENGINE_KERNELS_HWY_DOT_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/hwy/layout.h"

// Which dot product this pass compiles (redefined on every pass).
#undef ENGINE_HWY_DOT_VNNI
#undef ENGINE_HWY_DOT_MADDUBS
#if HWY_TARGET == HWY_AVX3_DL
#define ENGINE_HWY_DOT_VNNI 1
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
#define ENGINE_HWY_DOT_MADDUBS 1
#endif

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {
namespace hn = ::hwy::HWY_NAMESPACE;

// At most 64 bytes per vector: one 64-byte slice of a chunk covers the 16 rows
// of a group; narrower targets take it in 2 (AVX2) or 4 (SSE4) pieces.
using DU8 = hn::CappedTag<uint8_t, 64>;
using DI8 = hn::Repartition<int8_t, DU8>;
using DU16 = hn::Repartition<uint16_t, DU8>;
using DI16 = hn::Repartition<int16_t, DU8>;
using DI32 = hn::Repartition<int32_t, DU8>;
using DF = hn::Repartition<float, DU8>;
using VU8 = hn::Vec<DU8>;
using VI8 = hn::Vec<DI8>;
using VI32 = hn::Vec<DI32>;
using VF = hn::Vec<DF>;

// An int32 accumulator of byte dot products; start(init), add, finish.
struct DotAcc {
  // Declared, not implicit: GCC gives implicit members no target attribute,
  // and then cannot inline the vectors' constructors into them (aarch64).
  HWY_INLINE DotAcc() {}
  VI32 s0;
#if !defined(ENGINE_HWY_DOT_VNNI)
  VI32 s1;    // the portable path's second half (ReorderWidenMulAccumulate)
  VI32 base;  // init, added after the rearrangement
#endif
#if defined(ENGINE_HWY_DOT_MADDUBS)
  hn::Vec<DI16> pending;  // vpmaddubsw's int16 pair sums not yet widened (DotSmallPending)
#endif
};

HWY_INLINE DotAcc DotStart(VI32 init) {
  DotAcc acc;
#if defined(ENGINE_HWY_DOT_VNNI)
  acc.s0 = init;
#else
  acc.s0 = acc.s1 = hn::Zero(DI32());
  acc.base = init;
#endif
#if defined(ENGINE_HWY_DOT_MADDUBS)
  acc.pending = hn::Zero(DI16());
#endif
  return acc;
}

// 4 activation bytes broadcast to every int32 lane.
HWY_INLINE VI8 Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return hn::BitCast(DI8(), hn::Set(DI32(), v));
}

#if defined(ENGINE_HWY_DOT_VNNI)
// vpdpbusd with the 4 activation bytes as an embedded broadcast ({1to16}):
// one fused uop where GCC 12 emits a broadcast load and the vpdpbusd. A
// prefill tile issues one per 64 multiply-adds, and the separate broadcasts
// held a Q4_0 tile back: 321 -> 349 GOP/s on one core (M128 N256 K4096,
// best of 10 alternating runs).
HWY_INLINE void DotVnniAt(DotAcc& acc, VU8 w, const int8_t* a) {
  __asm__("vpdpbusd %[a]%{1to16%}, %[w], %[acc]"
          : [acc] "+v"(acc.s0.raw)
          : [w] "v"(w.raw), [a] "m"(*reinterpret_cast<const int32_t*>(a)));
}
#endif

// Portable: acc += w . a per 4-byte lane group, any w in 0..255, with the 4
// activation bytes at `a` broadcast to every lane.
HWY_INLINE void DotPortable(DotAcc& acc, VU8 w, const int8_t* a) {
#if defined(ENGINE_HWY_DOT_VNNI)
  DotVnniAt(acc, w, a);
#else
  const DU16 du16;
  const DI16 di16;
  const DI32 di32;
  const auto w16 = hn::BitCast(du16, w);
  const auto w_even = hn::BitCast(di16, hn::And(w16, hn::Set(du16, 0xFF)));
  const auto w_odd = hn::BitCast(di16, hn::ShiftRight<8>(w16));
  const auto a16 = hn::BitCast(di16, Broadcast4(a));
  const auto a_even = hn::ShiftRight<8>(hn::ShiftLeft<8>(a16));  // arithmetic: sign-extends
  const auto a_odd = hn::ShiftRight<8>(a16);
  acc.s0 = hn::ReorderWidenMulAccumulate(di32, w_even, a_even, acc.s0, acc.s1);
  acc.s0 = hn::ReorderWidenMulAccumulate(di32, w_odd, a_odd, acc.s0, acc.s1);
#endif
}

// Full bytes (Q8_0's codes, IQ4_NL's code-book values) are packed as the
// signed value + 128. On AVX2, FullBytes turns them back into the signed value
// and DotFullBytes multiplies its magnitude by the activations given its sign
// (vpsignb): one vpmaddubsw per 4 bytes of 8 rows (pairs at most 2 * 128 *
// 127 = 32512, no saturation), where the portable path splits the bytes into
// int16 halves with three shifts and two vpmaddwd. Such a sum then starts
// from zero, not from the activations' offset_sum that pays back the +128
// (kFullBytesSigned). One AVX2 core (matmul_bench from cache, best of 4
// alternating runs on a loaded machine), GOP/s: Q8_0 prefill 52 -> 70, decode
// 22.3 -> 23.7; IQ4_NL prefill 52 -> 68, decode 36 -> 49.
#if HWY_TARGET == HWY_AVX2
inline constexpr bool kFullBytesSigned = true;
#else
inline constexpr bool kFullBytesSigned = false;
#endif

HWY_INLINE VU8 FullBytes(VU8 stored) {
  if constexpr (kFullBytesSigned) return hn::Xor(stored, hn::Set(DU8(), 0x80));
  return stored;
}

HWY_INLINE void DotFullBytes(DotAcc& acc, VU8 w, const int8_t* a) {
#if HWY_TARGET == HWY_AVX2
  const __m256i signed_a = _mm256_sign_epi8(Broadcast4(a).raw, w.raw);
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w.raw), signed_a);
  acc.s0 = hn::Add(acc.s0, VI32{_mm256_madd_epi16(pairs, _mm256_set1_epi16(1))});
#else
  DotPortable(acc, w, a);
#endif
}

// acc += w . a for weights w <= 128 (no int16 saturation in vpmaddubsw).
HWY_INLINE void DotSmall(DotAcc& acc, VU8 w, const int8_t* a) {
#if defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX2
  const __m256i pairs = _mm256_maddubs_epi16(w.raw, Broadcast4(a).raw);
  acc.s0 = hn::Add(acc.s0, VI32{_mm256_madd_epi16(pairs, _mm256_set1_epi16(1))});
#elif defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX3
  const __m512i pairs = _mm512_maddubs_epi16(w.raw, Broadcast4(a).raw);
  acc.s0 = hn::Add(acc.s0, VI32{_mm512_madd_epi16(pairs, _mm512_set1_epi16(1))});
#else
  DotPortable(acc, w, a);
#endif
}

// DotSmallPending: acc += w . a as DotSmall does, but on the vpmaddubsw path
// the int16 pair sums are added up in int16 and widened to int32 (one
// vpmaddwd) only by DotWiden or DotFinish: half the multiply-port uops. Each
// pair sum is at most 2 * max_w * 128, so at most DotPendingMax(max_w) calls
// may pile up between widenings: 8 for 4-bit codes (Q4_0, Q4_K), 4 for
// 5-bit, 2 for 6-bit. The sums are exact either way. On an AVX2 core (AMD
// EPYC, no AVX-512; matmul_bench M128 N4096 K4096, best of 5 alternating
// runs) prefill went Q4_0 124 -> 160 GOP/s, Q5_0 104 -> 131, Q4_K 119 -> 133,
// Q6_K 99 -> 110.
// An empty asm that claims to change v: the int16 adds of a pending sum
// happen one after the other, as written. Without it GCC 12 reassociated the
// chain of a Q4_K prefill tile (4 rows, 8 loads per sub-block, fully
// unrolled): every vpmaddubsw result was stored to the stack and the sums
// added up from there at the end (270 ymm stack accesses in the AVX2 RunQ4K,
// 96 with it). One AVX2 core, matmul_bench prefill M128 N4096 K4096, 5
// alternating runs on a loaded machine (load average 6-7), GOP/s best
// (median): Q4_0 141 -> 156 (135 -> 136), Q4_K 122 -> 152 (118 -> 120), Q6_K
// 106 -> 119 (97 -> 103).
#if defined(ENGINE_HWY_DOT_MADDUBS)
template <class V>
HWY_INLINE void KeepInOrder(V& v) {
  __asm__("" : "+v"(v.raw));
}
#endif

constexpr size_t DotPendingMax(int max_w) { return 32767 / (2 * static_cast<size_t>(max_w) * 128); }

HWY_INLINE void DotSmallPending(DotAcc& acc, VU8 w, const int8_t* a) {
#if defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX2
  acc.pending = hn::Add(acc.pending, hn::Vec<DI16>{_mm256_maddubs_epi16(w.raw, Broadcast4(a).raw)});
  KeepInOrder(acc.pending);
#elif defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX3
  acc.pending = hn::Add(acc.pending, hn::Vec<DI16>{_mm512_maddubs_epi16(w.raw, Broadcast4(a).raw)});
  KeepInOrder(acc.pending);
#else
  DotSmall(acc, w, a);
#endif
}

// The pending int16 sums of DotSmallPending, widened into the int32 sums.
HWY_INLINE void DotWiden(DotAcc& acc) {
#if defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX2
  acc.s0 = hn::Add(acc.s0, VI32{_mm256_madd_epi16(acc.pending.raw, _mm256_set1_epi16(1))});
  acc.pending = hn::Zero(DI16());
#elif defined(ENGINE_HWY_DOT_MADDUBS) && HWY_TARGET == HWY_AVX3
  acc.s0 = hn::Add(acc.s0, VI32{_mm512_madd_epi16(acc.pending.raw, _mm512_set1_epi16(1))});
  acc.pending = hn::Zero(DI16());
#else
  (void)acc;
#endif
}

// The int32 sums: init + every product of the lane's bytes (pending ones too).
HWY_INLINE VI32 DotFinish(DotAcc acc) {
#if defined(ENGINE_HWY_DOT_VNNI)
  return acc.s0;
#else
#if defined(ENGINE_HWY_DOT_MADDUBS)
  DotWiden(acc);
#endif
  // The maddubs path adds pairwise int32 sums into s0 only, which is what
  // RearrangeToOddPlusEven expects of s0 (on x86 it returns s0 as it is).
  return hn::Add(hn::RearrangeToOddPlusEven(acc.s0, acc.s1), acc.base);
#endif
}

// The 6/8-bit per-row scales of sub-block s, as int32 lanes.
HWY_INLINE VI32 LoadScalesU8(const uint8_t* p) {
  return hn::PromoteTo(DI32(), hn::LoadU(hn::Rebind<uint8_t, DI32>(), p));
}
HWY_INLINE VI32 LoadScalesI8(const uint8_t* p) {
  return hn::PromoteTo(DI32(), hn::LoadU(hn::Rebind<int8_t, DI32>(), reinterpret_cast<const int8_t*>(p)));
}

// Low and high nibbles of each byte.
HWY_INLINE VU8 LowNibbles(VU8 v) { return hn::And(v, hn::Set(DU8(), 0x0F)); }
HWY_INLINE VU8 HighNibbles(VU8 v) {
  const DU16 du16;
  return hn::And(hn::BitCast(DU8(), hn::ShiftRight<4>(hn::BitCast(du16, v))), hn::Set(DU8(), 0x0F));
}

// The fp16 scales of the rows one int32 vector covers, as floats.
HWY_INLINE VF LoadHalfScales(const uint8_t* p) {
  const hn::Rebind<::hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const ::hwy::float16_t*>(p)));
}

// Weight loads that also ask for the line kPrefetchAhead bytes further on,
// into L2 (prefetcht1). Decode reads each weight once from DRAM; with the
// hardware prefetcher alone this core streamed packed Q4_0 / Q4_K / Q6_K
// weights at 91% / 88% / 67% of a plain read loop, with one prefetch per load
// 8 KiB ahead at 115% / 113% / 105% (best of 15 runs, CPU time; 2-32 KiB all
// help, 1 KiB does not; prefetcht0 and prefetchnta were slower). Every line of
// a chunk must be asked for: leaving Q4_1's scale line to the hardware cost
// 25 points. A separate loop of prefetches per chunk instead cost 20% of the
// L1-resident speed; one per load costs nothing measurable.
inline constexpr size_t kPrefetchAhead = 8192;

HWY_INLINE VU8 LoadAndPrefetch(const uint8_t* p, size_t ahead) {
  __builtin_prefetch(p + ahead, 0, 2);
  return hn::LoadU(DU8(), p);
}
// The same for lines read through other loads (scales).
HWY_INLINE void PrefetchAhead(const uint8_t* p, size_t ahead) { __builtin_prefetch(p + ahead, 0, 2); }

// Stores the first `count` lanes of v (count <= Lanes).
HWY_INLINE void StoreFirst(VF v, size_t count, float* dst) {
  const DF df;
  if (count >= hn::Lanes(df)) {
    hn::StoreU(v, df, dst);
    return;
  }
  HWY_ALIGN float lanes[hn::MaxLanes(df)];
  hn::Store(v, df, lanes);
  for (size_t i = 0; i < count; ++i) dst[i] = lanes[i];
}

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // ENGINE_KERNELS_HWY_DOT_INL_H_
