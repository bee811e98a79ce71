#include "kernels/ref/type_ops.h"

#include <array>

#include "kernels/ref/quants.h"

namespace kernels::ref {
namespace {

using gguf::GgmlType;

// One entry per computed type. The activation formats Q8_1 and Q8_K have no
// vec_dot: they are only ever the right-hand side of one.
constexpr std::array<TypeOps, 17> kTypeOps = {{
    {GgmlType::F32, quantize_row_f32, dequantize_row_f32, GgmlType::F32, vec_dot_f32_f32, nullptr},
    {GgmlType::F16, quantize_row_f16, dequantize_row_f16, GgmlType::F32, vec_dot_f16_f32, nullptr},
    {GgmlType::BF16, quantize_row_bf16, dequantize_row_bf16, GgmlType::F32, vec_dot_bf16_f32, nullptr},
    {GgmlType::Q4_0, quantize_row_q4_0, dequantize_row_q4_0, GgmlType::Q8_0, vec_dot_q4_0_q8_0,
     quantize_row_q4_0_weighted},
    {GgmlType::Q4_1, quantize_row_q4_1, dequantize_row_q4_1, GgmlType::Q8_1, vec_dot_q4_1_q8_1,
     quantize_row_q4_1_weighted},
    {GgmlType::Q5_0, quantize_row_q5_0, dequantize_row_q5_0, GgmlType::Q8_0, vec_dot_q5_0_q8_0,
     quantize_row_q5_0_weighted},
    {GgmlType::Q5_1, quantize_row_q5_1, dequantize_row_q5_1, GgmlType::Q8_1, vec_dot_q5_1_q8_1,
     quantize_row_q5_1_weighted},
    {GgmlType::Q8_0, quantize_row_q8_0, dequantize_row_q8_0, GgmlType::Q8_0, vec_dot_q8_0_q8_0, nullptr},
    {GgmlType::Q8_1, quantize_row_q8_1, dequantize_row_q8_1, GgmlType::Q8_1, nullptr, nullptr},
    {GgmlType::Q4_K, quantize_row_q4_k, dequantize_row_q4_k, GgmlType::Q8_K, vec_dot_q4_k_q8_k,
     quantize_row_q4_k_weighted},
    {GgmlType::Q5_K, quantize_row_q5_k, dequantize_row_q5_k, GgmlType::Q8_K, vec_dot_q5_k_q8_k,
     quantize_row_q5_k_weighted},
    {GgmlType::Q6_K, quantize_row_q6_k, dequantize_row_q6_k, GgmlType::Q8_K, vec_dot_q6_k_q8_k,
     quantize_row_q6_k_weighted},
    {GgmlType::Q2_K, quantize_row_q2_k, dequantize_row_q2_k, GgmlType::Q8_K, vec_dot_q2_k_q8_k,
     quantize_row_q2_k_weighted},
    {GgmlType::Q3_K, quantize_row_q3_k, dequantize_row_q3_k, GgmlType::Q8_K, vec_dot_q3_k_q8_k,
     quantize_row_q3_k_weighted},
    {GgmlType::IQ4_NL, quantize_row_iq4_nl, dequantize_row_iq4_nl, GgmlType::Q8_0, vec_dot_iq4_nl_q8_0,
     quantize_row_iq4_nl_weighted},
    {GgmlType::IQ4_XS, quantize_row_iq4_xs, dequantize_row_iq4_xs, GgmlType::Q8_K, vec_dot_iq4_xs_q8_k,
     quantize_row_iq4_xs_weighted},
    {GgmlType::Q8_K, quantize_row_q8_k, dequantize_row_q8_k, GgmlType::Q8_K, nullptr, nullptr},
}};

}  // namespace

const TypeOps* type_ops(gguf::GgmlType type) {
  for (const TypeOps& ops : kTypeOps) {
    if (ops.type == type) return &ops;
  }
  return nullptr;
}

}  // namespace kernels::ref
