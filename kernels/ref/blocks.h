// Block layouts of the ggml quantized types, byte for byte as llama.cpp writes
// them into GGUF files (ggml-common.h). Every tier reads these structs, so this
// header holds layouts, constants and the one bit-unpacking rule that is part
// of a layout (the K-quant 6-bit scales); no intrinsics.
//
// fp16 fields are raw IEEE half bits (uint16_t); convert with kernels/ref/fp16.h.
// All multi-byte fields are little-endian, like the files.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernels::ref {

// Elements per block of the legacy types (Q4_0 ... Q8_1).
inline constexpr size_t QK = 32;
// Elements per super-block of the K types (Q4_K ... Q8_K).
inline constexpr size_t QK_K = 256;
// Sub-blocks of a Q4_K / Q5_K super-block (32 elements each) and the bytes
// holding their 6-bit scales and mins (unpack_k_scale_min below).
inline constexpr size_t kKSubBlocks = QK_K / 32;
inline constexpr size_t kKScaleBytes = 12;

// x = d * (q - 8), q in 0..15. qs[j] holds element j (low nibble) and element
// j + 16 (high nibble).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[QK / 2];
};

// x = d * q + m, q in 0..15; nibbles as in Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[QK / 2];
};

// x = d * (q - 16), q in 0..31: low 4 bits in qs as in Q4_0, bit 4 of element
// j is bit j of the little-endian 32-bit word qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK / 2];
};

// x = d * q + m, q in 0..31; bits as in Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[QK / 2];
};

// x = d * q, q in -127..127.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[QK];
};

// Q8_0 plus s = d * sum(qs) (fp16), which lets the dot products with Q4_1 and
// Q5_1 apply their offset m once per block.
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[QK];
};

// 8 sub-blocks of 32: x = d * sc[j] * q - dmin * m[j], q in 0..15, sc and m
// 6-bit, packed into `scales` (unpack_k_scale_min). qs: 4 chunks of 64
// elements; byte l of chunk c holds element 64c + l (low nibble) and
// 64c + 32 + l (high nibble).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[QK_K / 2];
};

// As Q4_K with 5-bit q: qs as in Q4_K; bit 4 of element 64c + l is bit 2c of
// qh[l], of element 64c + 32 + l bit 2c + 1.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};

// 16 sub-blocks of 16: x = d * scales[j] * (q - 32), q in 0..63. Two chunks of
// 128 elements; in chunk c (ql + 64c, qh + 32c), for l < 32:
//   element 128c + l      : low nibble of ql[l],      bits 0-1 of qh[l]
//   element 128c + l + 32 : low nibble of ql[l + 32], bits 2-3 of qh[l]
//   element 128c + l + 64 : high nibble of ql[l],     bits 4-5 of qh[l]
//   element 128c + l + 96 : high nibble of ql[l + 32], bits 6-7 of qh[l]
struct BlockQ6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;
};

// Activation format for the K-quant dot products: x = d * q, with d in fp32
// and bsums[j] = sum of qs[16j .. 16j + 15] for applying the K mins.
struct BlockQ8_K {
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16];
};

// 16 sub-blocks of 16: x = d * (scales[j] & 0xF) * q - dmin * (scales[j] >> 4),
// q in 0..3. Two chunks of 128 elements; element 128c + 32s + l (s, the
// quarter, 0..3; l < 32) is bits 2s..2s+1 of qs[32c + l].
struct BlockQ2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16: x = d * (sc[j] - 32) * (q - 4), q in 0..7, sc 6-bit
// (q3_k_scale below). The low two bits of q are laid out as in Q2_K; bit 2 of
// element e is bit e / 32 of hmask[e % 32].
struct BlockQ3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};

// The non-linear 4-bit code book of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl):
// a code q stands for d * kIQ4Values[q].
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// x = d * kIQ4Values[q]; nibbles as in Q4_0.
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[QK / 2];
};

// 8 sub-blocks of 32: x = d * (ls[j] - 32) * kIQ4Values[q], ls 6-bit
// (iq4_xs_scale below); sub-block j's nibbles are qs[16j .. 16j + 15] as in Q4_0.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[QK_K / 64];
  uint8_t qs[QK_K / 2];
};

// The 6-bit scale (0..63, stored with +32) of sub-block j (0..15) of a Q3_K
// block: the low nibble is in scales[j] (j < 8) or the high nibble of
// scales[j - 8]; bits 4-5 are bits 2(j/4)..2(j/4)+1 of scales[8 + j % 4].
inline uint8_t q3_k_scale(const uint8_t* scales, size_t j) {
  const uint8_t low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
  return static_cast<uint8_t>(low | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4));
}

// The 6-bit scale (0..63, stored with +32) of sub-block j (0..7) of an IQ4_XS
// block: the low nibble in scales_l[j / 2], bits 4-5 at bit 2j of scales_h.
inline uint8_t iq4_xs_scale(const BlockIQ4_XS& b, size_t j) {
  return static_cast<uint8_t>(((b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((b.scales_h >> (2 * j)) & 3) << 4));
}

// The 6-bit scale sc and min m of sub-block j (0..7) of a Q4_K / Q5_K block.
// Bytes 0-3 hold sc[0..3] in their low 6 bits, bytes 4-7 m[0..3]; the two top
// bits of bytes 0-3 and 4-7 are bits 4-5 of sc[4..7] and m[4..7], whose low 4
// bits sit in bytes 8-11 (sc low nibble, m high nibble).
inline void unpack_k_scale_min(const uint8_t* scales, size_t j, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = scales[j] & 63;
    m = scales[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

// The 6-bit code (0..63) of element e of a Q6_K block (the layout above).
inline uint8_t q6_k_code(const BlockQ6_K& b, size_t e) {
  const size_t c = e / 128, l = e % 32, quarter = e % 128 / 32;
  const uint8_t ql = b.ql[64 * c + l + (quarter % 2) * 32];
  const uint8_t low = quarter < 2 ? ql & 0xF : ql >> 4;
  return static_cast<uint8_t>(low | ((b.qh[32 * c + l] >> (2 * quarter)) & 3) << 4);
}

// Sizes must equal block_bytes in gguf/ggml_types.cpp (and ggml's structs).
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);

}  // namespace kernels::ref
