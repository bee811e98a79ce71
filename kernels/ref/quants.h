// The scalar reference functions behind the TypeOps table (type_ops.h), one set
// per type. Callers normally go through type_ops(); the names are public so the
// tests and the other tiers' tests can call a specific one.
//
// Conventions for every function: k is a multiple of the type's block size;
// rows are the GGUF byte layouts of blocks.h; quantize_row_* is bit-exact with
// ggml's quantize_row_*_ref (what llama-quantize writes without an imatrix).
//
// Dot products: sum_i w[i] * a[i] for one weight row w and one activation row a
// in the type's dot format. The integer types compute each block's integer sum
// exactly (int32) and then scale it in float, accumulating blocks in order
// (the exact float expressions are in the comments at the top of
// quants_legacy.cpp and quants_k.cpp). Faster tiers match the integer sums
// exactly and the float result within rounding.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernels::ref {

// Quantization under an importance matrix (llama-quantize --imatrix):
// quantize_row_*_weighted(x, dst, k, qw) is bit-exact with ggml's
// quantize_<type> given quant_weights, qw holding one non-negative weight per
// element of the row (the mean squared activation of that input column).
// Where ggml's quantizer ignores the weights (Q8_0, the float types) there is
// none.

// Float rows (quants_float.cpp). Dot format F32; products and the running sum
// are double, rounded to float once at the end, so the result is the float
// nearest to the exact sum for all but pathological cancellations.
void quantize_row_f32(const float* x, void* dst, size_t k);
void dequantize_row_f32(const void* src, float* y, size_t k);
float vec_dot_f32_f32(size_t k, const void* w, const void* a);
void quantize_row_f16(const float* x, void* dst, size_t k);
void dequantize_row_f16(const void* src, float* y, size_t k);
float vec_dot_f16_f32(size_t k, const void* w, const void* a);
void quantize_row_bf16(const float* x, void* dst, size_t k);
void dequantize_row_bf16(const void* src, float* y, size_t k);
float vec_dot_bf16_f32(size_t k, const void* w, const void* a);

// Legacy 32-element blocks (quants_legacy.cpp).
void quantize_row_q4_0(const float* x, void* dst, size_t k);
void quantize_row_q4_1(const float* x, void* dst, size_t k);
void quantize_row_q5_0(const float* x, void* dst, size_t k);
void quantize_row_q5_1(const float* x, void* dst, size_t k);
void quantize_row_q8_0(const float* x, void* dst, size_t k);
void quantize_row_q8_1(const float* x, void* dst, size_t k);
void quantize_row_q4_0_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q4_1_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q5_0_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q5_1_weighted(const float* x, void* dst, size_t k, const float* qw);
void dequantize_row_q4_0(const void* src, float* y, size_t k);
void dequantize_row_q4_1(const void* src, float* y, size_t k);
void dequantize_row_q5_0(const void* src, float* y, size_t k);
void dequantize_row_q5_1(const void* src, float* y, size_t k);
void dequantize_row_q8_0(const void* src, float* y, size_t k);
void dequantize_row_q8_1(const void* src, float* y, size_t k);
float vec_dot_q4_0_q8_0(size_t k, const void* w, const void* a);
float vec_dot_q4_1_q8_1(size_t k, const void* w, const void* a);
float vec_dot_q5_0_q8_0(size_t k, const void* w, const void* a);
float vec_dot_q5_1_q8_1(size_t k, const void* w, const void* a);
float vec_dot_q8_0_q8_0(size_t k, const void* w, const void* a);

// K super-blocks of 256 (quants_k.cpp).
void quantize_row_q4_k(const float* x, void* dst, size_t k);
void quantize_row_q5_k(const float* x, void* dst, size_t k);
void quantize_row_q6_k(const float* x, void* dst, size_t k);
void quantize_row_q8_k(const float* x, void* dst, size_t k);
void quantize_row_q4_k_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q5_k_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q6_k_weighted(const float* x, void* dst, size_t k, const float* qw);
void dequantize_row_q4_k(const void* src, float* y, size_t k);
void dequantize_row_q5_k(const void* src, float* y, size_t k);
void dequantize_row_q6_k(const void* src, float* y, size_t k);
void dequantize_row_q8_k(const void* src, float* y, size_t k);
float vec_dot_q4_k_q8_k(size_t k, const void* w, const void* a);
float vec_dot_q5_k_q8_k(size_t k, const void* w, const void* a);
float vec_dot_q6_k_q8_k(size_t k, const void* w, const void* a);

// K super-blocks of 256 with 16-element sub-blocks (quants_k_low.cpp).
void quantize_row_q2_k(const float* x, void* dst, size_t k);
void quantize_row_q3_k(const float* x, void* dst, size_t k);
void quantize_row_q2_k_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_q3_k_weighted(const float* x, void* dst, size_t k, const float* qw);
void dequantize_row_q2_k(const void* src, float* y, size_t k);
void dequantize_row_q3_k(const void* src, float* y, size_t k);
float vec_dot_q2_k_q8_k(size_t k, const void* w, const void* a);
float vec_dot_q3_k_q8_k(size_t k, const void* w, const void* a);

// Non-linear 4-bit codes (quants_iq.cpp). quantize_row_* is bit-exact with
// llama-quantize without an imatrix (ggml's quantize_iq4_nl / quantize_iq4_xs,
// not their *_ref twins: see quants_iq.cpp).
void quantize_row_iq4_nl(const float* x, void* dst, size_t k);
void quantize_row_iq4_xs(const float* x, void* dst, size_t k);
void quantize_row_iq4_nl_weighted(const float* x, void* dst, size_t k, const float* qw);
void quantize_row_iq4_xs_weighted(const float* x, void* dst, size_t k, const float* qw);
void dequantize_row_iq4_nl(const void* src, float* y, size_t k);
void dequantize_row_iq4_xs(const void* src, float* y, size_t k);
float vec_dot_iq4_nl_q8_0(size_t k, const void* w, const void* a);
float vec_dot_iq4_xs_q8_k(size_t k, const void* w, const void* a);

}  // namespace kernels::ref
