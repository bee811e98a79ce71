// hwy tier: the legacy 32-element block types times 8-bit activations, every
// Highway target.
//
//   matmul_f32_q8_0_q4_0_4x16_hwy   matmul_f32_q8_0_q5_0_4x16_hwy   matmul_f32_q8_0_q8_0_4x16_hwy
//   matmul_f32_q8_1_q4_1_4x16_hwy   matmul_f32_q8_1_q5_1_4x16_hwy
//   matmul_f32_q8_0_iq4_nl_4x16_hwy
//
// Contract (kernels/matmul.h): m_step 1, n_step 16 (kRows). pack_rhs
// interleaves 16 weight rows per group, one chunk per block of 32 of the size
// of the 16 GGUF blocks (layout.h). pack_lhs is the Q8_0 / Q8_1 quantizer of
// quantize.cpp (LhsQ8_0: codes, scale, the offset times the sum of codes,
// Q8_1's s), one packer per weight type (the offset differs).
//
// Per block and output: the exact int32 sum of code products, the weight codes
// unsigned (0..15, 0..31, Q8_0's code + 128, or IQ4_NL's code-book value + 128,
// looked up from its nibble with one byte shuffle) and the symmetric types'
// offset (-8, -16, -128) taken back through the activations' offset_sum, the
// sum's starting value; then in float sum = fma(d_w d_a, isum, sum), then
// fma(m_w, s_a, sum) for Q4_1 / Q5_1, blocks in order: the reference's integer
// sums and scale products, each term added with one rounding instead of two
// (hwy_targets_test bounds the difference). Lanes are rows: one vector of
// int32 sums covers 16 rows (AVX-512), and the 16 results of a group are
// stored without a horizontal sum.
//
// Decode (m = 1) streams each group once, 16 rows in flight; prefill passes
// over K in L1-sized pieces with kTileM activation rows per weight block
// loaded (RunGroups in groups-inl.h): 4 in the names, 8 on AVX-512.
//
// On one core (M128 N256 K4096 from L2, best of 10 alternating runs), Q4_0
// prefill went 273 -> 396 GOP/s with 8 rows per tile (+17%), vpdpbusd's
// embedded broadcast of the activations (dot-inl.h, +9%), the fused adds
// (+3.5%) and offset_sum loaded instead of computed (+9%): each a uop less
// on the two ports that run 512-bit vector instructions.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/hwy/matmul_blocks.cpp"
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

// Chunk layouts (layout.h); once, not per target.
#ifndef ENGINE_KERNELS_HWY_LEGACY_LAYOUT
#define ENGINE_KERNELS_HWY_LEGACY_LAYOUT
namespace kernels::hwy_tier {
enum class Legacy { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kIQ4_NL };
template <Legacy kType>
struct LegacyChunk {
  static constexpr bool kFifthBit = kType == Legacy::kQ5_0 || kType == Legacy::kQ5_1;
  static constexpr bool kHasMin = kType == Legacy::kQ4_1 || kType == Legacy::kQ5_1;
  static constexpr bool kBytes8 = kType == Legacy::kQ8_0;
  // IQ4_NL: nibbles as in Q4_0, each standing for kIQ4Values[code] + 128.
  static constexpr bool kCodeBook = kType == Legacy::kIQ4_NL;
  static constexpr size_t kQh = kBytes8 ? 512 : 256;          // after the codes; Q5 only
  static constexpr size_t kD = kQh + (kFifthBit ? 64 : 0);    // 16 fp16 scales
  static constexpr size_t kM = kD + 32;                       // 16 fp16 offsets; Q4_1 / Q5_1 only
  static constexpr size_t kBytes = kM + (kHasMin ? 32 : 0);
  // The code offset of the packed weights, paid back through the activation sum.
  static constexpr int32_t kOffset =
      kType == Legacy::kQ4_0 ? 8 : kType == Legacy::kQ5_0 ? 16 : kBytes8 || kCodeBook ? 128 : 0;
};
static_assert(LegacyChunk<Legacy::kQ4_0>::kBytes == kQ4_0Chunk && LegacyChunk<Legacy::kQ8_0>::kBytes == kQ8_0Chunk);
static_assert(LegacyChunk<Legacy::kQ4_1>::kBytes == 16 * sizeof(ref::BlockQ4_1));
static_assert(LegacyChunk<Legacy::kQ5_0>::kBytes == 16 * sizeof(ref::BlockQ5_0));
static_assert(LegacyChunk<Legacy::kQ5_1>::kBytes == 16 * sizeof(ref::BlockQ5_1));
static_assert(LegacyChunk<Legacy::kIQ4_NL>::kBytes == 16 * sizeof(ref::BlockIQ4_NL));
constexpr bool iq4_unsigned_is_the_code_book_plus_128() {
  for (size_t i = 0; i < 16; ++i) {
    if (kIQ4Unsigned[i] != ref::kIQ4Values[i] + 128) return false;
  }
  return true;
}
static_assert(iq4_unsigned_is_the_code_book_plus_128());
}  // namespace kernels::hwy_tier
#endif

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

// Activation rows per pass over a group: 8 where there are 32 vector
// registers (AVX-512: 8 accumulators, the 8 unpacked weight vectors of a block,
// temporaries), so each unpacked weight vector serves 8 rows; 4 elsewhere.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kLegacyTileM = 8;
#else
constexpr size_t kLegacyTileM = 4;
#endif

// One legacy type's weights: see RunGroups.
template <Legacy kType>
struct LegacyFamily {
  using Lhs = LhsQ8_0;
  using Layout = LegacyChunk<kType>;
  static constexpr size_t kChunk = Layout::kBytes;
  static constexpr size_t kTileM = kLegacyTileM;

  // Block b (at chunk) for rows v*l32.. of the group: acc[r] += its terms.
  template <size_t kM>
  static HWY_INLINE void Block(const LhsQ8_0* lhs, size_t nb, size_t b, const uint8_t* chunk, size_t v, VF* acc) {
    const DU8 du8;
    const DU16 du16;
    const DI32 di32;
    const DF df;
    const size_t l8 = hn::Lanes(du8), l32 = hn::Lanes(di32);
    for (size_t off = Layout::kQh; off < kChunk; off += 64) PrefetchAhead(chunk + off, kPrefetchAhead);
    const VF dw = LoadHalfScales(chunk + Layout::kD + 2 * v * l32);
    VI32 isum[kM];
    if constexpr (Layout::kBytes8) {
      VU8 w[8];  // codes 4j..4j+3 of each row
      for (size_t j = 0; j < 8; ++j) w[j] = FullBytes(LoadAndPrefetch(chunk + 64 * j + v * l8, kPrefetchAhead));
      for (size_t r = 0; r < kM; ++r) {
        const LhsQ8_0& a = lhs[r * nb + b];
        DotAcc s = DotStart(hn::Set(di32, kFullBytesSigned ? 0 : a.offset_sum));
        for (size_t j = 0; j < 8; ++j) DotFullBytes(s, w[j], a.qs + 4 * j);
        isum[r] = DotFinish(s);
      }
    } else if constexpr (Layout::kCodeBook) {
      // Values up to 241 as stored would saturate vpmaddubsw's int16
      // pairs: the full-byte path, as Q8_0.
      const VU8 book = hn::LoadDup128(du8, kIQ4Unsigned);
      VU8 lo[4], hi[4];  // values of codes 4j..4j+3 and 16+4j..16+4j+3 of each row
      for (size_t j = 0; j < 4; ++j) {
        const VU8 packed = LoadAndPrefetch(chunk + 64 * j + v * l8, kPrefetchAhead);
        lo[j] = FullBytes(hn::TableLookupBytes(book, LowNibbles(packed)));
        hi[j] = FullBytes(hn::TableLookupBytes(book, HighNibbles(packed)));
      }
      for (size_t r = 0; r < kM; ++r) {
        const LhsQ8_0& a = lhs[r * nb + b];
        DotAcc s = DotStart(hn::Set(di32, kFullBytesSigned ? 0 : a.offset_sum));
        for (size_t j = 0; j < 4; ++j) {
          DotFullBytes(s, lo[j], a.qs + 4 * j);
          DotFullBytes(s, hi[j], a.qs + 16 + 4 * j);
        }
        isum[r] = DotFinish(s);
      }
    } else {
      VU8 lo[4], hi[4];  // codes 4j..4j+3 and 16+4j..16+4j+3 of each row
      for (size_t j = 0; j < 4; ++j) {
        const VU8 packed = LoadAndPrefetch(chunk + 64 * j + v * l8, kPrefetchAhead);
        lo[j] = LowNibbles(packed);
        hi[j] = HighNibbles(packed);
      }
      if constexpr (Layout::kFifthBit) {  // byte t of a row: bit j = code 4j+t, bit 4+j = code 16+4j+t
        const auto qh = hn::BitCast(du16, hn::LoadU(du8, chunk + Layout::kQh + v * l8));
        const VU8 bit4 = hn::Set(du8, 0x10);
        for (size_t j = 0; j < 4; ++j) {
          lo[j] = hn::OrAnd(lo[j], hn::BitCast(du8, hn::ShiftLeftSame(qh, static_cast<int>(4 - j))), bit4);
          hi[j] = hn::OrAnd(hi[j], hn::BitCast(du8, hn::ShiftRightSame(qh, static_cast<int>(j))), bit4);
        }
      }
      for (size_t r = 0; r < kM; ++r) {
        const LhsQ8_0& a = lhs[r * nb + b];
        DotAcc s = DotStart(hn::Set(di32, a.offset_sum));
        // 8 products per block: all pending for 4-bit codes, 4 for 5-bit.
        static_assert(DotPendingMax(Layout::kFifthBit ? 31 : 15) >= (Layout::kFifthBit ? 4 : 8));
        for (size_t j = 0; j < 4; ++j) {
          DotSmallPending(s, lo[j], a.qs + 4 * j);
          DotSmallPending(s, hi[j], a.qs + 16 + 4 * j);
          if (Layout::kFifthBit && j == 1) DotWiden(s);
        }
        isum[r] = DotFinish(s);
      }
    }
    for (size_t r = 0; r < kM; ++r) {
      const LhsQ8_0& a = lhs[r * nb + b];
      acc[r] = hn::MulAdd(hn::Mul(dw, hn::Set(df, a.d)), hn::ConvertTo(df, isum[r]), acc[r]);
      if constexpr (Layout::kHasMin) {
        acc[r] = hn::MulAdd(LoadHalfScales(chunk + Layout::kM + 2 * v * l32), hn::Set(df, a.s), acc[r]);
      }
    }
  }
};

template <Legacy kType>
HWY_INLINE void RunLegacy(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst,
                          size_t dst_stride) {
  RunGroups<LegacyFamily<kType>>(m, n, k / ref::QK, static_cast<const LhsQ8_0*>(lhs),
                                 static_cast<const uint8_t*>(rhs), dst, dst_stride);
}

ENGINE_HWY_TARGET_RUN(RunQ4_0, RunLegacy<Legacy::kQ4_0>)
ENGINE_HWY_TARGET_RUN(RunQ4_1, RunLegacy<Legacy::kQ4_1>)
ENGINE_HWY_TARGET_RUN(RunQ5_0, RunLegacy<Legacy::kQ5_0>)
ENGINE_HWY_TARGET_RUN(RunQ5_1, RunLegacy<Legacy::kQ5_1>)
ENGINE_HWY_TARGET_RUN(RunQ8_0, RunLegacy<Legacy::kQ8_0>)
ENGINE_HWY_TARGET_RUN(RunIQ4_NL, RunLegacy<Legacy::kIQ4_NL>)

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kernels::hwy_tier {
namespace {

ENGINE_HWY_RUN(RunQ4_0, run_q4_0)
ENGINE_HWY_RUN(RunQ4_1, run_q4_1)
ENGINE_HWY_RUN(RunQ5_0, run_q5_0)
ENGINE_HWY_RUN(RunQ5_1, run_q5_1)
ENGINE_HWY_RUN(RunQ8_0, run_q8_0)
ENGINE_HWY_RUN(RunIQ4_NL, run_iq4_nl)

// The fifth bits of a Q5 block (bit j of the little-endian qh word = code j),
// rearranged so that byte t holds codes 4j+t at bit j and 16+4j+t at bit 4+j:
// the kernel then reaches the bit of each code of load j with one shift.
void pack_fifth_bits(const uint8_t* qh, uint8_t* out) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  for (size_t t = 0; t < 4; ++t) {
    uint8_t byte = 0;
    for (size_t j = 0; j < 4; ++j) {
      byte = static_cast<uint8_t>(byte | (((bits >> (4 * j + t)) & 1) << j) | (((bits >> (16 + 4 * j + t)) & 1) << (4 + j)));
    }
    out[t] = byte;
  }
}

// Scalar repacking, once at load (the layout is the same for every target).
template <class Block, Legacy kType>
void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  using Layout = LegacyChunk<kType>;
  const size_t nb = k / ref::QK;
  const auto* rows = static_cast<const Block*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += Layout::kBytes) {
      std::memset(out, 0, Layout::kBytes);
      for (size_t r = 0; r < kRows && g * kRows + r < n; ++r) {
        const Block& blk = rows[(g * kRows + r) * nb + b];
        if constexpr (Layout::kBytes8) {
          for (size_t j = 0; j < 8; ++j) {
            for (size_t t = 0; t < 4; ++t) out[64 * j + 4 * r + t] = static_cast<uint8_t>(blk.qs[4 * j + t] ^ 0x80);
          }
        } else {
          for (size_t j = 0; j < 4; ++j) std::memcpy(out + 64 * j + 4 * r, blk.qs + 4 * j, 4);
        }
        if constexpr (Layout::kFifthBit) pack_fifth_bits(blk.qh, out + Layout::kQh + 4 * r);
        std::memcpy(out + Layout::kD + 2 * r, &blk.d, 2);
        if constexpr (Layout::kHasMin) std::memcpy(out + Layout::kM + 2 * r, &blk.m, 2);
      }
    }
  }
}

// The kernel of a legacy type: Q8_0 activations (Q8_1 for the types with a
// min: the same codes and d, with s).
template <class Block, Legacy kType>
constexpr MatmulKernel kernel(const char* name, gguf::GgmlType type, RunFn run) {
  using Layout = LegacyChunk<kType>;
  return group_kernel<ref::QK, Layout::kBytes, sizeof(LhsQ8_0)>(
      name, type, Layout::kHasMin ? gguf::GgmlType::Q8_1 : gguf::GgmlType::Q8_0, pack_rhs<Block, kType>,
      pack_lhs_q8_0<Layout::kOffset>, run);
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_0 =
    kernel<ref::BlockQ4_0, Legacy::kQ4_0>("matmul_f32_q8_0_q4_0_4x16_hwy", gguf::GgmlType::Q4_0, run_q4_0);
constinit const MatmulKernel kMatmulQ4_1 =
    kernel<ref::BlockQ4_1, Legacy::kQ4_1>("matmul_f32_q8_1_q4_1_4x16_hwy", gguf::GgmlType::Q4_1, run_q4_1);
constinit const MatmulKernel kMatmulQ5_0 =
    kernel<ref::BlockQ5_0, Legacy::kQ5_0>("matmul_f32_q8_0_q5_0_4x16_hwy", gguf::GgmlType::Q5_0, run_q5_0);
constinit const MatmulKernel kMatmulQ5_1 =
    kernel<ref::BlockQ5_1, Legacy::kQ5_1>("matmul_f32_q8_1_q5_1_4x16_hwy", gguf::GgmlType::Q5_1, run_q5_1);
constinit const MatmulKernel kMatmulQ8_0 =
    kernel<ref::BlockQ8_0, Legacy::kQ8_0>("matmul_f32_q8_0_q8_0_4x16_hwy", gguf::GgmlType::Q8_0, run_q8_0);
constinit const MatmulKernel kMatmulIQ4_NL =
    kernel<ref::BlockIQ4_NL, Legacy::kIQ4_NL>("matmul_f32_q8_0_iq4_nl_4x16_hwy", gguf::GgmlType::IQ4_NL, run_iq4_nl);

}  // namespace kernels::hwy_tier
#endif  // HWY_ONCE
