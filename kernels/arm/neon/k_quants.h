// K-quant pieces shared by the packed Q4_K, Q5_K and Q6_K layouts of the ARM
// tiers (arm/neon and arm/dotprod matmul_q4_k_q5_k.cpp, matmul_q6_k.cpp,
// through super_block_tile.h). Header-only, internal linkage, Armv8.0 instructions
// only (see tile.h).
//
// The two tiers' packed super-blocks have the same fields; the codes differ in
// order only (each tier's file documents its layout).
//
// Q4_K scales in a packed group: the 6-bit scale sc and min m of sub-block s
// (0..7) of row c, unpacked from the GGUF 12-byte form and bit-packed with
// pack_six_bit (packed.h) as four vectors of bytes 4s' + c:
//   u0 = sc of sub-blocks 0-3, u1 = sc 4-7, u2 = m 0-3, u3 = m 4-7
// 48 bytes for 4 rows, as in the file.
//
// Q5_K is Q4_K's fields and code nibbles plus a fifth bit per code (GGUF qh:
// bit s of qh[l] for element l of sub-block s). The packed group keeps those
// bits inverted, 32 bytes per quarter of the super-block in two planes laid
// out so that one CMTST against a constant finds a vector's bits (each tier's
// file gives the order), and the codes decode as q - 16 (-16..15): the
// 5-bit codes 0..31 times +-127 would overflow the neon tier's int16 lanes
// (NeonSmallCodes, int8_dot.h), their offset -16 ones do not. The tile adds
// the 16 sum_s sc_s * (the sub-block's activation sum) back to the integer
// sum (Q5KMinsDecode below), so the integers, and so the floats, are the
// reference's.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/ggml_types.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/super_block_tile.h"
#include "kernels/arm/fifth_bits.h"
#include "kernels/arm/iq4_codes.h"
#include "kernels/arm/low_bit_k.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

struct Q4KPacked {
  uint16_t d[kTileN];
  uint16_t dmin[kTileN];
  uint8_t scales[3][16];  // below
  uint8_t qs[4][128];     // the 4-bit codes, in the tier's order
};
static_assert(sizeof(Q4KPacked) == kTileN * sizeof(ref::BlockQ4_K));

struct Q5KPacked {
  uint16_t d[kTileN];
  uint16_t dmin[kTileN];
  uint8_t scales[3][16];  // as Q4KPacked's
  uint8_t qh[4][2][16];   // the inverted fifth bits of quarter q in two planes
  uint8_t qs[4][128];     // the low 4 bits, as Q4KPacked's in the tier's order
};
static_assert(sizeof(Q5KPacked) == kTileN * sizeof(ref::BlockQ5_K));

struct Q6KPacked {
  uint16_t d[kTileN];
  int8_t scales[4][16];      // scales[g][4t + c]: sub-block 4g + t of row c
  uint8_t codes[16][3][16];  // pack_six_bit vectors (packed.h), in the tier's order
};
static_assert(sizeof(Q6KPacked) == kTileN * sizeof(ref::BlockQ6_K));

template <class Block>
inline void pack_q4_k_scales(const Block* const* blk, uint8_t (*out)[16]) {
  uint8_t u[4][16];
  for (size_t c = 0; c < kTileN; ++c) {
    for (size_t s = 0; s < ref::kKSubBlocks; ++s) {
      uint8_t sc, m;
      ref::unpack_k_scale_min(blk[c]->scales, s, sc, m);
      u[s / 4][4 * (s % 4) + c] = sc;
      u[2 + s / 4][4 * (s % 4) + c] = m;
    }
  }
  for (size_t i = 0; i < 16; ++i) pack_six_bit(u[0][i], u[1][i], u[2][i], u[3][i], out[0][i], out[1][i], out[2][i]);
}

// The scales of sub-blocks 2q and 2q + 1 of the 4 rows, as int32 lanes: bytes
// 8q.. of u0 | u1, which sit in the top six bits of the first two vectors.
struct SubBlockPairScales {
  int32x4_t even, odd;
};
inline SubBlockPairScales q4_k_pair_scales(const uint8_t (*scales)[16], size_t q) {
  const uint16x8_t sc16 = vmovl_u8(vshr_n_u8(vld1_u8(scales[0] + 8 * q), 2));
  return {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(sc16))), vreinterpretq_s32_u32(vmovl_high_u16(sc16))};
}

// The mins by sub-block: mins[h] holds sub-blocks 2h (lanes 0-3, by row) and
// 2h + 1 (lanes 4-7).
struct Q4KMins {
  int16x8_t pair[4];
};
inline Q4KMins widen_pairs(uint8x16_t lo, uint8x16_t hi) {
  return {{vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(lo))), vreinterpretq_s16_u16(vmovl_high_u8(lo)),
           vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(hi))), vreinterpretq_s16_u16(vmovl_high_u8(hi))}};
}
inline Q4KMins q4_k_mins(const uint8_t (*scales)[16]) {
  const uint8x16_t a = vld1q_u8(scales[0]), b = vld1q_u8(scales[1]), c = vld1q_u8(scales[2]);
  return widen_pairs(vshrq_n_u8(c, 2), six_bit_fourth_low(a, b, c));
}
// The scales in the same form (u0 and u1, the top six bits of a and b).
inline Q4KMins q4_k_scale_pairs(const uint8_t (*scales)[16]) {
  return widen_pairs(vshrq_n_u8(vld1q_u8(scales[0]), 2), vshrq_n_u8(vld1q_u8(scales[1]), 2));
}

// sum_s m[s][c] * (bsums[2s] + bsums[2s + 1]) for the 4 rows c (m: the mins,
// or the scales for Q5_K's offset).
inline int32x4_t q4_k_mins_dot(const Q4KMins& mins, const ref::BlockQ8_K& xb) {
  const int16x8_t sub = vpaddq_s16(vld1q_s16(xb.bsums), vld1q_s16(xb.bsums + 8));  // sums of 32 codes
  int32x4_t s = vmull_laneq_s16(vget_low_s16(mins.pair[0]), sub, 0);
  s = vmlal_high_laneq_s16(s, mins.pair[0], sub, 1);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[1]), sub, 2);
  s = vmlal_high_laneq_s16(s, mins.pair[1], sub, 3);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[2]), sub, 4);
  s = vmlal_high_laneq_s16(s, mins.pair[2], sub, 5);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[3]), sub, 6);
  return vmlal_high_laneq_s16(s, mins.pair[3], sub, 7);
}

// The 6-bit codes 0..63 of the 16 elements 16s .. 16s + 15 of a GGUF Q6_K
// block (blocks.h): in its 128-element chunk s / 8, element group r = s % 8
// takes the low (r < 4) or high nibble of ql[16 (r % 4)..] and two bits of
// qh[16 (r % 2)..] at bit 2 (r / 2).
inline uint8x16_t q6_k_codes16(const ref::BlockQ6_K& b, size_t s) {
  const size_t r = s % 8;
  const uint8x16_t l = vld1q_u8(b.ql + 64 * (s / 8) + 16 * (r % 4));
  const uint8x16_t h = vld1q_u8(b.qh + 32 * (s / 8) + 16 * (r % 2));
  const uint8x16_t six = vdupq_n_u8(0x3F);
  switch (r / 2) {
    case 0:
      return vandq_u8(vsliq_n_u8(l, h, 4), six);  // qh bits 0-1 over the low nibble
    case 1:
      return vandq_u8(vsliq_n_u8(l, vshrq_n_u8(h, 2), 4), six);  // bits 2-3
    case 2:
      return vandq_u8(vsriq_n_u8(h, l, 4), six);  // bits 4-5 over the high nibble
    default:
      return vsriq_n_u8(vshrq_n_u8(h, 2), l, 4);  // bits 6-7
  }
}

// The fields of a Q4KPacked (Q5KPacked) but its codes, from the 4 rows'
// super-blocks.
template <class Block, class Packed>
inline void pack_q4_k_header(const uint8_t* const* blocks, const Block** blk, Packed& p) {
  for (size_t c = 0; c < kTileN; ++c) {
    blk[c] = reinterpret_cast<const Block*>(blocks[c]);
    p.d[c] = blk[c]->d;
    p.dmin[c] = blk[c]->dmin;
  }
  pack_q4_k_scales(blk, p.scales);
}

// The fields of a Q6KPacked but its codes.
inline void pack_q6_k_header(const uint8_t* const* blocks, const ref::BlockQ6_K** blk, Q6KPacked& p) {
  for (size_t c = 0; c < kTileN; ++c) {
    blk[c] = reinterpret_cast<const ref::BlockQ6_K*>(blocks[c]);
    p.d[c] = blk[c]->d;
    for (size_t s = 0; s < ref::QK_K / 16; ++s) p.scales[s / 4][4 * (s % 4) + c] = blk[c]->scales[s];
  }
}

__attribute__((always_inline)) inline Q6KQuarterScales q6_k_quarter_scales(const Q6KPacked& p, size_t g) {
  return quarter_scales(vld1q_s8(p.scales[g]));
}

// The packed inverted fifth bits of Q5_K (above): byte i of plane j of quarter
// q of the group holds 8 of them, bit b that of element l of sub-block 2q + h
// of row c, where (j, i, b) = place(c, h, l) is the tier's order.
template <class Place>
inline void pack_q5_k_planes(const ref::BlockQ5_K* const* blk, Q5KPacked& p, Place place) {
  std::memset(p.qh, 0, sizeof p.qh);
  for (size_t c = 0; c < kTileN; ++c) {
    for (size_t q = 0; q < 4; ++q) {
      for (size_t h = 0; h < 2; ++h) {
        for (size_t l = 0; l < 32; ++l) {
          const auto [j, i, b] = place(c, h, l);
          const unsigned inverted = (~static_cast<unsigned>(blk[c]->qh[l]) >> (2 * q + h)) & 1u;
          p.qh[q][j][i] = static_cast<uint8_t>(p.qh[q][j][i] | inverted << b);
        }
      }
    }
  }
}

// How super_block_tile.h takes the mins of Q4KPacked and Q5KPacked (the same
// scales), and that Q6_K has none. The codes are 2^kCodeOffsetBits below the
// reference's (0: none), and the tile adds 2^kCodeOffsetBits sum_s sc_s *
// bsum_s back, the sc_s from offset_scales in mins_dot's form.
struct Q4KMinsDecode {
  static constexpr bool kMins = true;
  static constexpr int kCodeOffsetBits = 0;
  template <class Packed>
  __attribute__((always_inline)) static Q4KMins mins(const Packed& p) {
    return q4_k_mins(p.scales);
  }
  __attribute__((always_inline)) static int32x4_t mins_dot(const Q4KMins& m, const ref::BlockQ8_K& xb) {
    return q4_k_mins_dot(m, xb);
  }
};
struct Q5KMinsDecode : Q4KMinsDecode {
  static constexpr int kCodeOffsetBits = 4;  // q - 16
  __attribute__((always_inline)) static Q4KMins offset_scales(const Q5KPacked& p) {
    return q4_k_scale_pairs(p.scales);
  }
};
struct NoMins {
  static constexpr bool kMins = false;
};

// What the neon and dotprod decode structs of Q4_K (kQ5 false) and Q5_K
// share (super_block_tile.h): their blocks, packed form and mins policy; the
// packing of all but the nibbles, whose order is the tier's (Place: the order
// of the fifth bits, pack_q5_k_planes); and the decoding of 16 codes from
// their nibbles (the low ones for kHalf 0) and, for Q5_K, quarter q's planes.
template <bool kQ5, class Place>
struct OffsetKType : SuperBlockType<kQ5 ? gguf::GgmlType::Q5_K : gguf::GgmlType::Q4_K,
                                    std::conditional_t<kQ5, ref::BlockQ5_K, ref::BlockQ4_K>,
                                    std::conditional_t<kQ5, Q5KPacked, Q4KPacked>>,
                     std::conditional_t<kQ5, Q5KMinsDecode, Q4KMinsDecode> {
  using Block = std::conditional_t<kQ5, ref::BlockQ5_K, ref::BlockQ4_K>;
  using Packed = std::conditional_t<kQ5, Q5KPacked, Q4KPacked>;
  struct Planes {
    uint8x16_t v[2];
  };

  static void pack_fields(const uint8_t* const* blocks, const Block** blk, Packed& p) {
    pack_q4_k_header(blocks, blk, p);
    if constexpr (kQ5) pack_q5_k_planes(blk, p, Place{});
  }

  __attribute__((always_inline)) static Planes planes(const Packed& p, size_t q) {
    if constexpr (kQ5) return {{vld1q_u8(p.qh[q][0]), vld1q_u8(p.qh[q][1])}};
    return {};
  }

  // Q4_K: the nibbles 0..15; Q5_K: q - 16 with bit `bit` of plane `plane`.
  template <size_t kHalf>
  __attribute__((always_inline)) static int8x16_t codes(uint8x16_t raw, const Planes& planes, size_t plane,
                                                        unsigned bit) {
    if constexpr (kQ5) return fifth_bit_codes<kHalf>(raw, planes.v[plane], bit);
    return vreinterpretq_s8_u8(kHalf == 0 ? vandq_u8(raw, vdupq_n_u8(0x0F)) : vshrq_n_u8(raw, 4));
  }
};

// IQ4_XS's packed super-block of a group: the fields and the 24 bytes of
// scales (arm/iq4_codes.h) in both tiers, the codes of sub-block s in qs[s]
// in the tier's order (each tier's file documents it).
struct IQ4XSPacked {
  uint16_t d[kTileN];
  uint8_t scales[24];
  uint8_t qs[8][64];
};
static_assert(sizeof(IQ4XSPacked) == kTileN * sizeof(ref::BlockIQ4_XS));

// What the neon and dotprod IQ4_XS decode structs share: the packing of all
// but the codes, and the scales decoded once per super-block for its quarters
// (super_block_tile.h's Shared).
struct IQ4XSType : SuperBlockType<gguf::GgmlType::IQ4_XS, ref::BlockIQ4_XS, IQ4XSPacked>, NoMins {
  using Shared = IQ4XSScales;

  static void pack_fields(const uint8_t* const* blocks, const ref::BlockIQ4_XS** blk, IQ4XSPacked& p) {
    std::memset(p.scales, 0, sizeof p.scales);
    for (size_t c = 0; c < kTileN; ++c) {
      blk[c] = reinterpret_cast<const ref::BlockIQ4_XS*>(blocks[c]);
      p.d[c] = blk[c]->d;
      pack_iq4_xs_scales(*blk[c], c, p.scales);
    }
  }

  __attribute__((always_inline)) static Shared shared(const IQ4XSPacked& p) { return decode_iq4_xs_scales(p.scales); }
};

// Sub-blocks 4g .. 4g + 3 of the 2- and 3-bit types, given by the tier's
// struct T (sub_block<kT, MR>: isum[i] += scale x integer dot, by row).
template <class T, size_t MR, class Packed>
__attribute__((always_inline)) inline void four_sub_blocks(const Packed& p, size_t g, const Q6KQuarterScales& sc,
                                                           const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
  T::template sub_block<0, MR>(p, g, sc, xb, isum);
  T::template sub_block<1, MR>(p, g, sc, xb, isum);
  T::template sub_block<2, MR>(p, g, sc, xb, isum);
  T::template sub_block<3, MR>(p, g, sc, xb, isum);
}

// The neon and dotprod Q3_K decode structs' common part: the packing (in the
// tier's Place), the scales, decoded once per super-block (Shared), the codes
// of a sub-block's vector v (codes<kT>), and the quarter, whose sub-blocks the
// tier's struct T gives.
template <class Place, class T>
struct Q3KType : SuperBlockType<gguf::GgmlType::Q3_K, ref::BlockQ3_K, Q3KPacked>, NoMins {
  using Shared = Q3KScales;

  static void pack(const uint8_t* const* blocks, Q3KPacked& p) {
    std::memset(&p, 0, sizeof p);
    for (size_t c = 0; c < kTileN; ++c) pack_q3_k_row<Place>(*reinterpret_cast<const ref::BlockQ3_K*>(blocks[c]), c, p);
  }

  __attribute__((always_inline)) static Shared shared(const Q3KPacked& p) { return decode_q3_k_scales(p); }

  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t codes(const Q3KPacked& p, size_t g, size_t v) {
    return q3_k_codes<kT>(vld1q_u8(p.low[g][v]), q3_k_high(p.high[g][v]));
  }

  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Q3KPacked& p, const Shared& scales, size_t g,
                                                     const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
    four_sub_blocks<T, MR>(p, g, quarter_scales(vld1q_s8(scales.sc[g])), xb, isum);
  }
};

// Q2_K's mins (super_block_tile.h's policy): 16 per row, against the Q8_K
// row's 16 sums.
struct Q2KMinsDecode {
  static constexpr bool kMins = true;
  static constexpr int kCodeOffsetBits = 0;
  __attribute__((always_inline)) static Q2KMins mins(const Q2KPacked& p) { return q2_k_mins(p); }
  __attribute__((always_inline)) static int32x4_t mins_dot(const Q2KMins& m, const ref::BlockQ8_K& xb) {
    return q2_k_mins_dot(m, xb);
  }
};

// The neon and dotprod Q2_K decode structs' common part, as Q3KType's: the
// scales are nibbles, unpacked per quarter.
template <class Place, class T>
struct Q2KType : SuperBlockType<gguf::GgmlType::Q2_K, ref::BlockQ2_K, Q2KPacked>, Q2KMinsDecode {
  static void pack(const uint8_t* const* blocks, Q2KPacked& p) {
    std::memset(&p, 0, sizeof p);
    for (size_t c = 0; c < kTileN; ++c) pack_q2_k_row<Place>(*reinterpret_cast<const ref::BlockQ2_K*>(blocks[c]), c, p);
  }

  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t codes(const Q2KPacked& p, size_t g, size_t v) {
    return q2_k_codes<kT>(vld1q_u8(p.low[g][v]));
  }

  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Q2KPacked& p, size_t g, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    four_sub_blocks<T, MR>(p, g, q2_k_quarter_scales(p, g), xb, isum);
  }
};

}  // namespace
}  // namespace kernels::arm
