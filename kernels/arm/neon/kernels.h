// The neon tier (Armv8.0 Advanced SIMD, the floor of every 64-bit ARM phone):
// its matmul kernels, one per weight type, for the registry (registry.cpp).
//
//   F32  matmul_f32_f32_f32_4x4_neon    F32 activations, FMLA in f32
//   F16  matmul_f32_f32_f16_4x4_neon    F32 activations, FCVTL + FMLA in f32
//   Q4_0 matmul_f32_q8_0_q4_0_4x4_neon  Q8_0 activations, SMULL/SMLAL in int16
//   Q5_0 matmul_f32_q8_0_q5_0_4x4_neon
//   Q8_0 matmul_f32_q8_0_q8_0_4x4_neon
//   Q4_K matmul_f32_q8_k_q4_k_4x4_neon  Q8_K activations
//   Q5_K matmul_f32_q8_k_q5_k_4x4_neon
//   Q6_K matmul_f32_q8_k_q6_k_4x4_neon
//   IQ4_NL matmul_f32_q8_0_iq4_nl_4x4_neon  Q8_0 activations, TBL into the code book
//   IQ4_XS matmul_f32_q8_k_iq4_xs_4x4_neon  Q8_K activations
//   Q4_1 matmul_f32_q8_1_q4_1_4x4_neon  Q8_1 activations, + m_w s_x per block
//   Q5_1 matmul_f32_q8_1_q5_1_4x4_neon
//   Q3_K matmul_f32_q8_k_q3_k_4x4_neon  Q8_K activations
//   Q2_K matmul_f32_q8_k_q2_k_4x4_neon  Q8_K activations, SMLAL by lane for the mins
//
// All tile 4 rows of X by 4 rows of W for prefill and 1 x 4 for decode, in one
// run(). F32 and F16 read the GGUF rows in place (one tile, float_tile.h); the quantized types are
// repacked at load into groups of 4 rows of the same size (packed.h, layouts
// at the top of each matmul_<type>.cpp; one tile loop for the block types,
// block_tile.h, and one for the super-block types, super_block_tile.h) and
// give the reference kernels' results bit for bit. The activation quantizers
// (quantize.h) are shared with the dotprod tier.
#pragma once

#include <span>

#include "kernels/matmul.h"

namespace kernels::neon {

std::span<const MatmulKernel> matmul_kernels();

}  // namespace kernels::neon
