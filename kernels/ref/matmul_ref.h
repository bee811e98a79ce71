// The ref tier of the matmul family (kernels/matmul.h): one kernel per weight
// type the engine computes, built on the scalar TypeOps (type_ops.h).
//
// Contract: tier ref, any CPU, no required features; m_step = n_step = 1;
// pack_rhs = nullptr (run() reads the GGUF rows in place, so the packed size
// and offsets are those of the GGUF rows); pack_lhs quantizes each activation
// row into the weight type's dot format (Q8_0, Q8_1, Q8_K, or F32 for the float
// types); run() is one vec_dot per output element. Pure: no allocation, no
// logging, no state.
#pragma once

#include <span>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"

namespace kernels::ref {

// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K,
// IQ4_NL and IQ4_XS, in that order; named matmul_f32_<lhs>_<rhs>_1x1_ref, e.g. matmul_f32_q8_k_q6_k_1x1_ref.
std::span<const MatmulKernel> ref_matmul_kernels();

// The ref kernel for a weight type, nullptr when the engine does not compute it.
const MatmulKernel* ref_matmul_kernel(gguf::GgmlType weight_type);

}  // namespace kernels::ref
