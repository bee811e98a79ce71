// Blocks whose exact bytes (and dequantized values) are derived by hand from
// the quantization algorithms and the layouts of blocks.h, so that a bug shared
// by quantize and dequantize cannot pass the round trips of ref_quants_test.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ref/blocks.h"
#include "kernels/ref/type_ops.h"

namespace {

using gguf::GgmlType;
using kernels::ref::QK;
using kernels::ref::QK_K;

// One block of `type` from the first values of `head` (the rest zeros, or
// `fill` when given).
template <typename Block>
Block quantize_block(GgmlType type, std::vector<float> head, size_t block_size, float fill = 0.0f) {
  head.resize(block_size, fill);
  Block block;
  kernels::ref::type_ops(type)->quantize_row(head.data(), &block, block_size);
  return block;
}

template <size_t N>
void expect_bytes(const uint8_t* got, const std::array<uint8_t, N>& want, const char* what) {
  for (size_t i = 0; i < N; ++i) EXPECT_EQ(int{got[i]}, int{want[i]}) << what << " byte " << i;
}

TEST(RefQuantsKnownBlock, Q8_0RoundsHalfAwayFromZero) {
  // amax 127: d = 1, codes = roundf(x): 1.5 -> 2, -2.5 -> -3, 126.5 -> 127.
  const auto b = quantize_block<kernels::ref::BlockQ8_0>(GgmlType::Q8_0, {-127, 1.5f, -2.5f, 0.49f, 126.5f}, QK);
  EXPECT_EQ(b.d, 0x3c00);
  const int8_t want[QK] = {-127, 2, -3, 0, 127};
  EXPECT_EQ(std::memcmp(b.qs, want, QK), 0);
}

TEST(RefQuantsKnownBlock, Q8_1StoresScaledSum) {
  // As Q8_0, and s = d * (-127 + 2 - 3 + 0 + 127 + 10) = 9 = fp16 0x4880.
  const auto b =
      quantize_block<kernels::ref::BlockQ8_1>(GgmlType::Q8_1, {-127, 1.5f, -2.5f, 0.49f, 126.5f, 10}, QK);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.s, 0x4880);
  const int8_t want[QK] = {-127, 2, -3, 0, 127, 10};
  EXPECT_EQ(std::memcmp(b.qs, want, QK), 0);
}

TEST(RefQuantsKnownBlock, Q4_0NegativeExtreme) {
  // max = -8: d = 1, code = min(15, trunc(x + 8.5)); element j and j + 16 share
  // byte j (low, high nibble). Zeros give code 8.
  const std::vector<float> x = {-8, 7.9f, 0.5f, -0.5f, 1.49f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, -3.2f};
  const auto b = quantize_block<kernels::ref::BlockQ4_0>(GgmlType::Q4_0, x, QK);
  EXPECT_EQ(b.d, 0x3c00);
  // codes 0, 15 (16 clamped), 9, 8, 9 | x16 -> 11, x17 -> 5
  expect_bytes(b.qs, std::array<uint8_t, 16>{0xb0, 0x5f, 0x89, 0x88, 0x89, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
                                             0x88, 0x88, 0x88, 0x88, 0x88},
               "Q4_0 qs");
  std::vector<float> y(QK);
  kernels::ref::type_ops(GgmlType::Q4_0)->dequantize_row(&b, y.data(), QK);
  EXPECT_EQ(y[0], -8);
  EXPECT_EQ(y[1], 7);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 0);
  EXPECT_EQ(y[16], 3);
  EXPECT_EQ(y[17], -3);
}

TEST(RefQuantsKnownBlock, Q4_0PositiveExtreme) {
  // max = +8: d = -1 (0xbc00): the positive extreme takes code 0.
  const auto b = quantize_block<kernels::ref::BlockQ4_0>(GgmlType::Q4_0, {8, -7.9f, 0.5f}, QK);
  EXPECT_EQ(b.d, 0xbc00);
  EXPECT_EQ(b.qs[0], 0x80);  // code 0 | zero's code 8 << 4
  EXPECT_EQ(b.qs[1], 0x8f);  // 7.9 + 8.5 -> 15
  EXPECT_EQ(b.qs[2], 0x88);  // -0.5 + 8.5 -> 8
  std::vector<float> y(QK);
  kernels::ref::type_ops(GgmlType::Q4_0)->dequantize_row(&b, y.data(), QK);
  EXPECT_EQ(y[0], 8);
  EXPECT_EQ(y[1], -7);
  EXPECT_EQ(y[2], 0);
}

TEST(RefQuantsKnownBlock, Q4_1) {
  // min -1, max 14: d = 1, m = -1 (0xbc00); code = min(15, trunc(x + 1 + 0.5)).
  std::vector<float> x(QK, -1.0f);
  x[1] = 14;
  x[2] = 0.5f;   // 2
  x[3] = 2.49f;  // 3
  x[16] = 6;     // 7
  const auto b = quantize_block<kernels::ref::BlockQ4_1>(GgmlType::Q4_1, x, QK);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.m, 0xbc00);
  expect_bytes(b.qs, std::array<uint8_t, 16>{0x70, 0x0f, 0x02, 0x03}, "Q4_1 qs");
  std::vector<float> y(QK);
  kernels::ref::type_ops(GgmlType::Q4_1)->dequantize_row(&b, y.data(), QK);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 14);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 2);
  EXPECT_EQ(y[16], 6);
}

TEST(RefQuantsKnownBlock, Q5_0) {
  // max = -16: d = 1, code = min(31, trunc(x + 16.5)); zeros -> 16.
  std::vector<float> x(QK, 0.0f);
  x[0] = -16;    // 0
  x[1] = 15.7f;  // 32 -> 31
  x[2] = 0.3f;   // 16
  x[3] = -0.6f;  // 15
  x[17] = 5;     // 21
  const auto b = quantize_block<kernels::ref::BlockQ5_0>(GgmlType::Q5_0, x, QK);
  EXPECT_EQ(b.d, 0x3c00);
  expect_bytes(b.qs, std::array<uint8_t, 16>{0x00, 0x5f, 0x00, 0x0f}, "Q5_0 qs");
  // Bit 4 of every code but elements 0 (code 0) and 3 (code 15): 0xfffffff6.
  expect_bytes(b.qh, std::array<uint8_t, 4>{0xf6, 0xff, 0xff, 0xff}, "Q5_0 qh");
  std::vector<float> y(QK);
  kernels::ref::type_ops(GgmlType::Q5_0)->dequantize_row(&b, y.data(), QK);
  EXPECT_EQ(y[0], -16);
  EXPECT_EQ(y[1], 15);
  EXPECT_EQ(y[2], 0);
  EXPECT_EQ(y[3], -1);
  EXPECT_EQ(y[17], 5);
}

TEST(RefQuantsKnownBlock, Q5_1) {
  // min -1, max 30: d = 1, m = -1; code = trunc(x + 1 + 0.5).
  std::vector<float> x(QK, -1.0f);
  x[1] = 30;    // 31
  x[2] = 15;    // 16
  x[20] = 3.5f;  // 5 (the tie goes up)
  const auto b = quantize_block<kernels::ref::BlockQ5_1>(GgmlType::Q5_1, x, QK);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.m, 0xbc00);
  expect_bytes(b.qs, std::array<uint8_t, 16>{0x00, 0x0f, 0x00, 0x00, 0x50}, "Q5_1 qs");
  expect_bytes(b.qh, std::array<uint8_t, 4>{0x06, 0x00, 0x00, 0x00}, "Q5_1 qh");
  std::vector<float> y(QK);
  kernels::ref::type_ops(GgmlType::Q5_1)->dequantize_row(&b, y.data(), QK);
  EXPECT_EQ(y[1], 30);
  EXPECT_EQ(y[2], 15);
  EXPECT_EQ(y[20], 4);
}

TEST(RefQuantsKnownBlock, Q8_KRoundsHalfToEvenAndSumsGroups) {
  // max = -127: iscale = -127 / max = 1, d = 1; nearest_int rounds ties to
  // even: 2.5 -> 2, -3.5 -> -4, 0.5 -> 0, 126.5 -> 126.
  std::vector<float> x(QK_K, 0.0f);
  x[0] = -127;
  x[1] = 2.5f;
  x[2] = -3.5f;
  x[3] = 0.5f;
  x[4] = 126.5f;
  x[17] = 7;
  const auto b = quantize_block<kernels::ref::BlockQ8_K>(GgmlType::Q8_K, x, QK_K);
  EXPECT_EQ(b.d, 1.0f);
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], 2);
  EXPECT_EQ(b.qs[2], -4);
  EXPECT_EQ(b.qs[3], 0);
  EXPECT_EQ(b.qs[4], 126);
  EXPECT_EQ(b.bsums[0], -127 + 2 - 4 + 126);
  EXPECT_EQ(b.bsums[1], 7);
  for (size_t g = 2; g < 16; ++g) EXPECT_EQ(b.bsums[g], 0);
}

// Q4_K / Q5_K: sub-block j holds {-top * s_j, 0} alternately (even elements the
// negative value), s_j = 2^(j - 7). Each sub-block is then fitted exactly by
// scale s_j, min top * s_j, codes 0 / top (iscale = top / (top s_j) = 2^(7-j)
// exactly, zero error, so no candidate of the search can win). Then:
//   d = fp16(1/63) = 0x2410, 6-bit scales round(63 s_j) = 0 1 2 4 8 16 32 63
//   (31.5 ties to 32); dmin = fp16(top/63); 6-bit mins round(63/top * top s_j),
//   where 63/top is a rounded float: for Q4_K 63/15 = 4.19999981f, so the
//   s = 1/2 min lands just below 31.5 and gets 31; for Q5_K 63/31 * 31 is
//   exactly 63 and the tie gives 32.
// Requantizing with the stored scales gives back codes 0 / top (checked by
// hand: (x + dmin m)/(d sc) is within 0.48 of 0 or top in every sub-block;
// sub-block 0 has scale code 0 and keeps its fitted codes).
std::vector<float> two_level_super_block(float top) {
  std::vector<float> x(QK_K);
  for (size_t i = 0; i < QK_K; ++i) {
    const float s = std::ldexp(1.0f, int(i / 32) - 7);
    x[i] = i % 2 == 0 ? -top * s : 0.0f;
  }
  return x;
}

TEST(RefQuantsKnownBlock, Q4_KTwoLevelSubBlocks) {
  const auto b = quantize_block<kernels::ref::BlockQ4_K>(GgmlType::Q4_K, two_level_super_block(15), QK_K);
  EXPECT_EQ(b.d, 0x2410);
  EXPECT_EQ(b.dmin, 0x339e);  // fp16(15/63)
  // sc = 0 1 2 4 8 16 32 63, m = 0 1 2 4 8 16 31 63 packed: bytes 0-3 sc[0..3] |
  // (sc[4..7] >> 4) << 6, bytes 4-7 the same for m, bytes 8-11 sc[4..7] & 15 |
  // (m[4..7] & 15) << 4.
  expect_bytes(b.scales, std::array<uint8_t, 12>{0x00, 0x41, 0x82, 0xc4, 0x00, 0x41, 0x42, 0xc4, 0x88, 0x00, 0xf0, 0xff},
               "Q4_K scales");
  for (size_t i = 0; i < QK_K / 2; ++i) EXPECT_EQ(b.qs[i], i % 2 == 0 ? 0x00 : 0xff) << "Q4_K qs " << i;
}

TEST(RefQuantsKnownBlock, Q5_KTwoLevelSubBlocks) {
  const auto b = quantize_block<kernels::ref::BlockQ5_K>(GgmlType::Q5_K, two_level_super_block(31), QK_K);
  EXPECT_EQ(b.d, 0x2410);
  EXPECT_EQ(b.dmin, 0x37df);  // fp16(31/63)
  expect_bytes(b.scales, std::array<uint8_t, 12>{0x00, 0x41, 0x82, 0xc4, 0x00, 0x41, 0x82, 0xc4, 0x88, 0x00, 0x00, 0xff},
               "Q5_K scales");
  // Codes 0 / 31: low nibbles 0 / 15, every fifth bit set on odd elements.
  for (size_t i = 0; i < QK_K / 2; ++i) EXPECT_EQ(b.qs[i], i % 2 == 0 ? 0x00 : 0xff) << "Q5_K qs " << i;
  for (size_t i = 0; i < QK_K / 8; ++i) EXPECT_EQ(b.qh[i], i % 2 == 0 ? 0x00 : 0xff) << "Q5_K qh " << i;
}

TEST(RefQuantsKnownBlock, Q6_KExactSubBlocks) {
  // Sub-block j holds sigma_j s_j (-32, 16, 5) in its first three elements, zeros
  // elsewhere, s_j = 2^-(j/4), sigma_j = +1 for even j, -1 for odd. The fit is
  // exact with codes (-32, 16, 5) and scale sigma_j s_j (all sums are powers of
  // two times integers, so no candidate wins on rounding). The largest scale is
  // +1 (j = 0): iscale = -128, d = fp16(-1/128) = 0xa000, and the int8 scales
  // are round(-128 sigma_j s_j), 128 clamped to 127. Requantizing with them
  // gives the same codes (j odd, s 1: 32 / -127/128 = -32.25 -> -32).
  std::vector<float> x(QK_K, 0.0f);
  for (size_t j = 0; j < 16; ++j) {
    const float s = std::ldexp(j % 2 == 0 ? 1.0f : -1.0f, -int(j / 4));
    x[16 * j] = -32 * s;
    x[16 * j + 1] = 16 * s;
    x[16 * j + 2] = 5 * s;
  }
  const auto b = quantize_block<kernels::ref::BlockQ6_K>(GgmlType::Q6_K, x, QK_K);
  EXPECT_EQ(b.d, 0xa000);
  const int8_t scales[16] = {-128, 127, -128, 127, -64, 64, -64, 64, -32, 32, -32, 32, -16, 16, -16, 16};
  for (size_t j = 0; j < 16; ++j) EXPECT_EQ(b.scales[j], scales[j]) << "Q6_K scale " << j;
  // Stored codes (q + 32): element 16j -> 0, 16j+1 -> 48 (0x30), 16j+2 -> 37
  // (0x25), others 32 (0x20). Every ql / qh byte combines elements 32 apart,
  // which share their position in the sub-block: ql low nibbles are 5 only at
  // position 2; qh holds the top two bits, 0, 3, 2, 2 for the four classes.
  for (size_t i = 0; i < QK_K / 2; ++i) EXPECT_EQ(b.ql[i], i % 16 == 2 ? 0x55 : 0x00) << "Q6_K ql " << i;
  for (size_t i = 0; i < QK_K / 4; ++i) {
    const int want = i % 16 == 0 ? 0x00 : i % 16 == 1 ? 0xff : 0xaa;
    EXPECT_EQ(b.qh[i], want) << "Q6_K qh " << i;
  }
}

// Hand-built K blocks, dequantized with the formulas of blocks.h written out
// element by element.
constexpr uint8_t kSc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
constexpr uint8_t kM[8] = {0, 5, 10, 15, 20, 40, 60, 63};
// kSc / kM packed by hand (see the Q4_K test above for the rule).
constexpr uint8_t kPackedScales[12] = {0x41, 0x82, 0xc3, 0xc4, 0x40, 0x85, 0xca, 0xcf, 0x41, 0x81, 0xc2, 0xff};

TEST(RefDequantizeKnownBlock, KScaleUnpacking) {
  for (size_t j = 0; j < 8; ++j) {
    uint8_t sc, m;
    kernels::ref::unpack_k_scale_min(kPackedScales, j, sc, m);
    EXPECT_EQ(sc, kSc[j]) << j;
    EXPECT_EQ(m, kM[j]) << j;
  }
}

TEST(RefDequantizeKnownBlock, Q4_KAndQ5_K) {
  kernels::ref::BlockQ5_K b5;
  b5.d = 0x3c00;     // 1
  b5.dmin = 0x3800;  // 0.5
  std::memcpy(b5.scales, kPackedScales, 12);
  for (size_t i = 0; i < QK_K / 2; ++i) b5.qs[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < QK_K / 8; ++i) b5.qh[i] = static_cast<uint8_t>(i * 7 + 3);
  kernels::ref::BlockQ4_K b4;
  b4.d = b5.d;
  b4.dmin = b5.dmin;
  std::memcpy(b4.scales, b5.scales, 12);
  std::memcpy(b4.qs, b5.qs, QK_K / 2);

  std::vector<float> y4(QK_K), y5(QK_K);
  kernels::ref::type_ops(GgmlType::Q4_K)->dequantize_row(&b4, y4.data(), QK_K);
  kernels::ref::type_ops(GgmlType::Q5_K)->dequantize_row(&b5, y5.data(), QK_K);
  for (size_t e = 0; e < QK_K; ++e) {
    const size_t chunk = e / 64, within = e % 64, l = within % 32;
    const bool high_half = within >= 32;
    const int byte = b4.qs[32 * chunk + l];
    const int low = high_half ? byte >> 4 : byte & 0xf;
    const int fifth = (b5.qh[l] >> (2 * chunk + (high_half ? 1 : 0))) & 1;
    const size_t j = e / 32;
    EXPECT_EQ(y4[e], 1.0f * kSc[j] * low - 0.5f * kM[j]) << "Q4_K element " << e;
    EXPECT_EQ(y5[e], 1.0f * kSc[j] * (low + 16 * fifth) - 0.5f * kM[j]) << "Q5_K element " << e;
  }
}

TEST(RefDequantizeKnownBlock, Q6_K) {
  kernels::ref::BlockQ6_K b;
  for (size_t i = 0; i < QK_K / 2; ++i) b.ql[i] = static_cast<uint8_t>(i * 3);
  for (size_t i = 0; i < QK_K / 4; ++i) b.qh[i] = static_cast<uint8_t>(i * 5 + 1);
  for (size_t j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(int(j) * 9 - 70);
  b.d = 0x3800;  // 0.5
  std::vector<float> y(QK_K);
  kernels::ref::type_ops(GgmlType::Q6_K)->dequantize_row(&b, y.data(), QK_K);
  for (size_t e = 0; e < QK_K; ++e) {
    const size_t chunk = e / 128, r = e % 128, l = r % 32, quarter = r / 32;
    const int byte = b.ql[64 * chunk + l + (quarter % 2 == 1 ? 32 : 0)];
    const int low = quarter < 2 ? byte & 0xf : byte >> 4;
    const int high = (b.qh[32 * chunk + l] >> (2 * quarter)) & 3;
    const int q = (low | high << 4) - 32;
    EXPECT_EQ(y[e], 0.5f * b.scales[e / 16] * q) << "element " << e;
  }
}

}  // namespace
