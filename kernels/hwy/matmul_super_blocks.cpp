// hwy tier: Q4_K, Q5_K and IQ4_XS weights (sub-blocks of 32) times Q8_K
// activations, every Highway target. The K types of 16 sub-blocks of 16
// (Q6_K, Q3_K, Q2_K) are in matmul_sub16.cpp.
//
//   matmul_f32_q8_k_q4_k_4x16_hwy   matmul_f32_q8_k_q5_k_4x16_hwy   matmul_f32_q8_k_iq4_xs_4x16_hwy
//
// Contract (kernels/matmul.h): m_step 1, n_step 16 (kRows). pack_rhs
// interleaves 16 weight rows per group, one chunk per super-block of 256
// (layout.h): Q4_K 2368 B and Q5_K 2880 B, 64 B (2.8%, 2.3%) more than the
// 16 GGUF blocks, because their 6-bit scales and mins are stored unpacked, one
// byte each, so that they load straight into vectors; IQ4_XS 2208 B (+32 B).
// pack_lhs is the Q8_K quantizer of quantize.cpp (LhsQ8K: codes, scale, sums
// of 16 and of 32).
//
// Per super-block and output, the reference's sums:
//   Q4_K, Q5_K: sum = sum_s sc_s * (codes . a over sub-block s of 32), codes
//         0..15 / 0..31 (nibble + fifth bit); mins = sum_s m_s * (sum of a
//         over s), as m . pair_lo + 128 m . pair_hi
//   IQ4_XS: sum = sum_s (ls_s - 32) * (values . a - 128 * (sum of a)) over 8
//         sub-blocks of 32, values the code book's + 128 (kIQ4Unsigned, layout.h) looked
//         up from the nibbles with a byte shuffle, full bytes (the portable dot)
// Each sub-block's dot product and mins are exact int32; the scales sc_s are
// applied in float, one fused multiply-add per sub-block (a convert and an FMA
// where vpmulld and an add took three uops), then the reference's terms
// (d_w d_a) sum - (dmin_w d_a) mins, or (d_w d_a) sum for IQ4_XS, super-blocks
// in order, each added with a fused multiply-add (hwy_targets_test bounds the
// difference to the reference; decode and prefill add the same terms in the
// same order, so results do not depend on the batch). Lanes are rows (see
// matmul_blocks.cpp).
//
// Decode streams each group once, 16 rows in flight; prefill passes over K in
// L1-sized pieces with kTileM activation rows per weight block loaded
// (RunGroups in groups-inl.h): on AVX-512 6 for Q4_K / Q5_K (8 for Q6_K, see
// matmul_sub16.cpp). One core, M128 x N4096 x K4096, best of 6 alternating
// runs: Q4_K 325 -> 379 GOP/s, Q5_K 235 -> 265, Q6_K 200 -> 294.
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

ENGINE_HWY_TARGET_RUN(RunQ4K, RunSuperBlocks<OffsetFamily<false>>)
ENGINE_HWY_TARGET_RUN(RunQ5K, RunSuperBlocks<OffsetFamily<true>>)
ENGINE_HWY_TARGET_RUN(RunIQ4XS, RunSuperBlocks<IQ4XSFamily>)

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {
namespace {

ENGINE_HWY_RUN(RunQ4K, run_q4_k)
ENGINE_HWY_RUN(RunQ5K, run_q5_k)
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

void pack_rhs_iq4_xs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using namespace iq4_xs;
  pack_groups<ref::BlockIQ4_XS, kBytes>(n, k, rhs, rhs_packed, [](const ref::BlockIQ4_XS& blk, uint8_t* out, size_t r) {
    for (size_t s = 0; s < 8; ++s) {
      for (size_t j = 0; j < 4; ++j) std::memcpy(out + (4 * s + j) * 64 + 4 * r, blk.qs + 16 * s + 4 * j, 4);
      out[kScales + s * kRows + r] = static_cast<uint8_t>(static_cast<int>(ref::iq4_xs_scale(blk, s)) - 32);
    }
    std::memcpy(out + kD + 2 * r, &blk.d, 2);
  });
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_K = q8_k_kernel<kQ4_KChunk>("matmul_f32_q8_k_q4_k_4x16_hwy", gguf::GgmlType::Q4_K,
                                                              pack_rhs_offset<ref::BlockQ4_K, false>, run_q4_k);
constinit const MatmulKernel kMatmulQ5_K = q8_k_kernel<kQ5_KChunk>("matmul_f32_q8_k_q5_k_4x16_hwy", gguf::GgmlType::Q5_K,
                                                              pack_rhs_offset<ref::BlockQ5_K, true>, run_q5_k);
constinit const MatmulKernel kMatmulIQ4_XS =
    q8_k_kernel<iq4_xs::kBytes>("matmul_f32_q8_k_iq4_xs_4x16_hwy", gguf::GgmlType::IQ4_XS, pack_rhs_iq4_xs, run_iq4_xs);

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
