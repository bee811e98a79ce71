// The dotprod tier (Armv8.2-A + FEAT_DotProd: SDOT): its matmul kernels, one
// per weight type, for the registry (registry.cpp).
//
//   F32  matmul_f32_f32_f32_4x4_dotprod    F32 activations, FMLA in f32
//   F16  matmul_f32_f32_f16_4x4_dotprod    F32 activations, FCVTL + FMLA in f32
//   Q4_0 matmul_f32_q8_0_q4_0_4x4_dotprod  Q8_0 activations, SDOT by element
//   Q5_0 matmul_f32_q8_0_q5_0_4x4_dotprod
//   Q8_0 matmul_f32_q8_0_q8_0_4x4_dotprod
//   Q4_K matmul_f32_q8_k_q4_k_4x4_dotprod  Q8_K activations
//   Q5_K matmul_f32_q8_k_q5_k_4x4_dotprod
//   Q6_K matmul_f32_q8_k_q6_k_4x4_dotprod
//   IQ4_NL matmul_f32_q8_0_iq4_nl_4x4_dotprod  Q8_0 activations, TBL into the code book
//   IQ4_XS matmul_f32_q8_k_iq4_xs_4x4_dotprod  Q8_K activations
//   Q4_1 matmul_f32_q8_1_q4_1_4x4_dotprod  Q8_1 activations, + m_w s_x per block
//   Q5_1 matmul_f32_q8_1_q5_1_4x4_dotprod
//   Q3_K matmul_f32_q8_k_q3_k_4x4_dotprod  Q8_K activations
//   Q2_K matmul_f32_q8_k_q2_k_4x4_dotprod  Q8_K activations, SMLAL by lane for the mins
//
// The quantized types are repacked at load into groups of 4 rows with their
// codes interleaved in 4-byte runs, so that SDOT by element leaves one column
// per accumulator lane (layouts at the top of each matmul_<type>.cpp; the tile
// loops are the neon tier's, arm/neon/block_tile.h and super_block_tile.h);
// they give the reference kernels' results bit for bit.
// F32, F16 and the activation quantizers are the neon tier's code (Armv8.2-A adds
// nothing for them without FEAT_FP16).
#pragma once

#include <span>

#include "kernels/matmul.h"

namespace kernels::dotprod {

std::span<const MatmulKernel> matmul_kernels();

}  // namespace kernels::dotprod
