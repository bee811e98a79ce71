// F32, F16 and BF16 rows: conversion both ways and the dot product with F32
// activations.
//
// The dot products multiply in double (a float times a float is exact in
// double) and accumulate in double, rounding to float once: the reference is
// then within about one float ulp of the exact sum for any k we meet, so a
// faster tier's float error is all its own. (ggml's scalar F32/F16 dots also
// accumulate in double.)
#include <cstring>

#include "kernels/ref/fp16.h"
#include "kernels/ref/quants.h"

namespace kernels::ref {
namespace {

template <typename Element, float (*to_float)(Element)>
float dot_with_f32(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const Element*>(w);
  const auto* activations = static_cast<const float*>(a);
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) sum += double{to_float(weights[i])} * double{activations[i]};
  return static_cast<float>(sum);
}

float identity(float f) { return f; }

}  // namespace

void quantize_row_f32(const float* x, void* dst, size_t k) { std::memcpy(dst, x, k * sizeof(float)); }

void dequantize_row_f32(const void* src, float* y, size_t k) { std::memcpy(y, src, k * sizeof(float)); }

float vec_dot_f32_f32(size_t k, const void* w, const void* a) { return dot_with_f32<float, identity>(k, w, a); }

void quantize_row_f16(const float* x, void* dst, size_t k) {
  auto* out = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < k; ++i) out[i] = fp32_to_fp16(x[i]);
}

void dequantize_row_f16(const void* src, float* y, size_t k) {
  const auto* in = static_cast<const uint16_t*>(src);
  for (size_t i = 0; i < k; ++i) y[i] = fp16_to_fp32(in[i]);
}

float vec_dot_f16_f32(size_t k, const void* w, const void* a) {
  return dot_with_f32<uint16_t, fp16_to_fp32>(k, w, a);
}

void quantize_row_bf16(const float* x, void* dst, size_t k) {
  auto* out = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < k; ++i) out[i] = fp32_to_bf16(x[i]);
}

void dequantize_row_bf16(const void* src, float* y, size_t k) {
  const auto* in = static_cast<const uint16_t*>(src);
  for (size_t i = 0; i < k; ++i) y[i] = bf16_to_fp32(in[i]);
}

float vec_dot_bf16_f32(size_t k, const void* w, const void* a) {
  return dot_with_f32<uint16_t, bf16_to_fp32>(k, w, a);
}

}  // namespace kernels::ref
