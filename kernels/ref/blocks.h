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

}  // namespace kernels::ref
