// The matmul kernel family contract. Every tier implements the same math:
//
//   Y[M,N] = X[M,K] * W[N,K]^T
//
// X: activations, M rows of K floats. W: weights, N rows of K elements of one
// ggml type, as stored in GGUF (row n = output feature n). Y: M rows of N floats.
//
// A kernel is a plain table of function pointers (KleidiAI style):
// - pack_rhs repacks the weights once, at load, into the layout run() reads;
//   nullptr means run() reads the GGUF rows as they are (no copy at all).
// - pack_lhs converts activations into the format run() reads: the integer dot
//   products want 8-bit blocks (Q8_0, Q8_1, Q8_K); float kernels take F32.
// - run is pure: no allocation, no threads, no logging, no global state. The
//   caller splits the work (by rows of W for decode, by tiles for prefill) and
//   passes offset pointers computed with the *_offset functions.
//
// Offsets and splits: m_idx and n_idx given to the offset functions, and the
// first row of every run() call, must be multiples of m_step / n_step. m, n
// passed to run() may be anything (tails are handled inside). k is always a
// multiple of the weight type's block size (GGUF guarantees it for ne[0]).
// pack_rhs may be called on slices of n_step rows: rhs advanced by
// n_idx * row_bytes(rhs_type, k), rhs_packed by rhs_packed_offset(n_idx, k);
// pack_lhs likewise on slices of m_step rows (lhs advanced by m_idx rows,
// lhs_packed by lhs_packed_offset(m_idx, k)), writing the bytes one call over
// all rows would (tests/kernels/tier_matmul_test.cpp checks both).
//
// Where a kernel lives: kernels/<tier folder>/matmul_<weight type>.cpp holds
// the tier's kernel for that type (the folder names the tier, so the file
// does not); a file holding one template's kernels for several types is named
// after their kind (matmul_blocks.cpp, matmul_super_blocks.cpp,
// matmul_float.cpp); a second kernel of one type in a folder adds its name's
// tier suffix (arm/sve/matmul_q4_0_svei8mm.cpp). Each tier keeps one tile
// template for the block types (32 elements, one scale: Q4_0, Q8_0, ...) and
// one for the super-block types (K-quants), a type being a small struct of
// force-inlined decode functions (block_tile.h, super_block_tile.h and their
// equivalents in each folder). The kernels are constant-initialized objects,
// kMatmul<Type>, declared in the tier's kernel_defs.h and listed in its
// kernels.cpp; the sme tier alone builds its table at first read, since its
// tile geometry follows the streaming vector length of the CPU.
#pragma once

#include <cstddef>

#include "gguf/ggml_types.h"
#include "kernels/cpu_features.h"
#include "kernels/tier.h"

namespace kernels {

struct MatmulKernel {
  // <op>_<dst>_<lhs>_<rhs>_<tile>_<tier>, e.g. "matmul_f32_q8_0_q4_0_1x1_ref".
  const char* name;
  Tier tier;
  Arch arch;                   // Arch::unknown: runs on any CPU
  uint64_t required_features;  // CpuFeatures::bits that run() executes
  gguf::GgmlType rhs_type;     // weight type, as in the GGUF file
  gguf::GgmlType lhs_type;     // activation format produced by pack_lhs
  size_t m_step;
  size_t n_step;

  size_t (*rhs_packed_size)(size_t n, size_t k);
  size_t (*rhs_packed_offset)(size_t n_idx, size_t k);
  void (*pack_rhs)(size_t n, size_t k, const void* rhs, void* rhs_packed);

  size_t (*lhs_packed_size)(size_t m, size_t k);
  size_t (*lhs_packed_offset)(size_t m_idx, size_t k);
  void (*pack_lhs)(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);

  // dst[i * dst_stride + j] = sum_k X[i,k] * W[j,k] for i < m, j < n.
  void (*run)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride);
  // run() scheduled for the in-order cores (Cortex-A53/A55/A510/A520 issue
  // in program order, so a loop's order of instructions is its speed there):
  // the same formats, the same results bit for bit. The pool calls it on the
  // threads of such cores (engine/threads/parallel_matmul.h). nullptr: run()
  // serves every core.
  void (*run_in_order)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                       size_t dst_stride) = nullptr;
};

}  // namespace kernels
