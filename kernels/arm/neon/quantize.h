// Activation packing of the ARM tiers (Armv8.0 Advanced SIMD, so every ARM
// tier shares these functions and thus one packed buffer across weight types):
// rows of floats -> rows of Q8_0 / Q8_K blocks, the same bytes as
// kernels::ref::quantize_row_q8_0 / quantize_row_q8_k (the kernels take Q8_0
// as BlockQ8_0F, lhs_q8_0.h: the same codes, the scale widened to float).
//
// Q8_0: d = amax / 127, codes rounded half away from zero (FCVTAS, like the
// reference's roundf). Q8_K: the element of largest magnitude (the first on
// ties, with its sign) maps onto -127, codes rounded half to even (FCVTNS, like
// the reference's nearest_int), bsums by 16 (SADDLV).
#pragma once

#include <cstddef>

namespace kernels::neon {

// k is a multiple of 32 (Q8_0) or 256 (Q8_K); dst holds k / 32 BlockQ8_0 or
// k / 256 BlockQ8_K.
void quantize_row_q8_0(const float* x, void* dst, size_t k);
void quantize_row_q8_k(const float* x, void* dst, size_t k);

// MatmulKernel::pack_lhs: m rows of lhs (row i at lhs + i * lhs_stride) into m
// consecutive packed rows of row_bytes(type, k) bytes.
void pack_lhs_q8_k(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);
void pack_lhs_f32(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);
// Q8_0 rows as k / 32 BlockQ8_0F each (lhs_q8_0.h), for the Q4_0 and Q8_0 kernels.
void pack_lhs_q8_0f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);
// Q8_1 rows as BlockQ8_0F with s and the codes' sum, for the Q4_1 and Q5_1 kernels.
void pack_lhs_q8_1f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);

}  // namespace kernels::neon
