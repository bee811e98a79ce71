// Shared by the sve tier's SDOT kernels: weights interleaved in groups of
// kGroupRows = 16 rows, 4 bytes of each row side by side ("a quad per 32-bit
// lane"), so that one SVE vector holds the same 4 codes of up to VL/32 rows and
// SDOT (indexed) multiplies them all by 4 codes of an activation row held in
// every 128-bit segment (LD1RQ). Each 32-bit lane accumulates one weight row:
// no horizontal reduction, and the per-row scales are a vector load away.
//
// Vector-length agnostic: a 16-row group takes one pass at 512 bits and more,
// 2 passes at 256, 4 at 128 (and 2 passes of 12 + 4 rows at 384); a pass
// covers `rows_per_pass()` rows starting at r0, predicated to the group.
#pragma once

#include <arm_sve.h>

#include <cstddef>
#include <cstdint>

namespace kernels::sve {
// Internal linkage: this header is compiled with -march=armv8.2-a+sve and with
// +sve+i8mm (mmla_pairs.h), and an inline function merged across the two by
// the linker could carry the wider flags into the other files' callers.
namespace {

inline constexpr size_t kGroupRows = 16;

inline size_t rows_per_pass() { return svcntw() < kGroupRows ? svcntw() : kGroupRows; }

// Lanes of rows r0 .. min(r0 + VL/32, end) - 1 (32-bit lanes) and their
// 4-byte quads (8-bit lanes).
inline svbool_t rows_b32(size_t r0, size_t end) {
  return svwhilelt_b32(static_cast<uint64_t>(r0), static_cast<uint64_t>(end));
}
inline svbool_t rows_b8(size_t r0, size_t end) {
  return svwhilelt_b8(static_cast<uint64_t>(4 * r0), static_cast<uint64_t>(4 * end));
}

// fp16 values p[r0 ..] (one per row) as float lanes.
inline svfloat32_t load_f16_rows(svbool_t pg32, const void* p, size_t r0) {
  const svuint32_t h = svld1uh_u32(pg32, static_cast<const uint16_t*>(p) + r0);
  return svcvt_f32_f16_x(pg32, svreinterpret_f16_u32(h));
}

// The indexed operands of SDOT and FMUL must sit in z0-z7. GCC 12 loads the
// activation vectors elsewhere and copies them into z0-z7 before every use
// (17 to 36 MOVs per block in the Q4_0 4-row loop of 32 SDOT); these
// one-instruction wrappers pin them there with the "y" constraint (a register
// in z0-z7). ld1rq_lo8<kOffset>(p) is svld1rq_s8(svptrue_b8(), p + kOffset)
// (16 bytes in every 128-bit segment; kOffset a multiple of 16 in -128..112),
// ld1rqw_lo8 the same for floats. The asm does not declare the memory it
// reads (a memory operand costs an address register per load): valid because
// the activations are written by pack_lhs, before run(), never during it.
template <int kOffset>
inline svint8_t ld1rq_lo8(const void* p) {
  static_assert(kOffset % 16 == 0 && kOffset >= -128 && kOffset <= 112);
  svint8_t x;
  asm("ld1rqb {%0.b}, %1/z, [%2, #%3]" : "=y"(x) : "Upl"(svptrue_b8()), "r"(p), "i"(kOffset));
  return x;
}
template <int kOffset>
inline svfloat32_t ld1rqw_lo8(const void* p) {
  static_assert(kOffset % 16 == 0 && kOffset >= -128 && kOffset <= 112);
  svfloat32_t x;
  asm("ld1rqw {%0.s}, %1/z, [%2, #%3]" : "=y"(x) : "Upl"(svptrue_b32()), "r"(p), "i"(kOffset));
  return x;
}

// acc + SDOT(w, x[kLane]): svdot_lane_s32(acc, w, x, kLane).
template <int kLane>
inline svint32_t sdot_lane(svint32_t acc, svint8_t w, svint8_t x) {
  asm("sdot %0.s, %1.b, %2.b[%3]" : "+w"(acc) : "w"(w), "y"(x), "i"(kLane));
  return acc;
}

// The run() of a group kernel K (kernels/matmul.h contract):
//   K::kBlock                   elements per block of the weight type
//   K::kPackedBlockBytes        one block of a 16-row group
//   K::kRowBlockBytes           one block of an activation row (pack_lhs)
//   K::kMr                      activation rows per pass (the m_step)
//   K::pass<R>(nb, x, x_row_bytes, w, r0, y, ldy, cols): R = kMr or 1 rows
// Weight groups outside, then the passes of a group (VL/32 rows each), then
// the activation rows, kMr at a time and the rest one by one; K::pass does the
// same float operations per output for every R.
template <class K>
void run_groups(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                size_t dst_stride) {
  const size_t nb = k / K::kBlock;
  const size_t x_row_bytes = nb * K::kRowBlockBytes;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += kGroupRows) {
    const uint8_t* w = rhs + n0 / kGroupRows * nb * K::kPackedBlockBytes;
    const size_t cols = n - n0 < kGroupRows ? n - n0 : kGroupRows;
    for (size_t r0 = 0; r0 < cols; r0 += rows_per_pass()) {
      size_t m0 = 0;
      for (; m0 + K::kMr <= m; m0 += K::kMr) {
        K::template pass<K::kMr>(nb, lhs + m0 * x_row_bytes, x_row_bytes, w, r0, dst + m0 * dst_stride + n0, dst_stride,
                                 cols);
      }
      for (; m0 < m; ++m0) {
        K::template pass<1>(nb, lhs + m0 * x_row_bytes, x_row_bytes, w, r0, dst + m0 * dst_stride + n0, dst_stride,
                            cols);
      }
    }
  }
}

}  // namespace
}  // namespace kernels::sve

// SVE_ROWS(R, M): M(0), then M(1) .. M(R-1) (R <= 4) under `if constexpr`;
// M names its per-row variables by pasting the index (acc##i -> acc0 ..).
// Sizeless SVE vectors cannot be array elements, and the ACLE tuple types
// (svint32x4_t) cost register copies in GCC 12 (26 MOVs per block in the Q4_0
// 4-row loop), so each row's vectors are plain named variables.
#define SVE_ROWS(R, M)     \
  M(0)                     \
  if constexpr ((R) > 1) { \
    M(1)                   \
  }                        \
  if constexpr ((R) > 2) { \
    M(2)                   \
  }                        \
  if constexpr ((R) > 3) { \
    M(3)                   \
  }
