// The dotprod tier's Q8_0 activations (Q4_0 and Q8_0 weights): the codes and
// scale of ref::quantize_row_q8_0, the scale stored as the float it widens to,
// in 48-byte blocks. Against the 34-byte BlockQ8_0 (fp16 scale first, codes at
// offset 2): one LDP for the 32 codes instead of two LDURs, and one LDR for
// the scale instead of a load and an FCVT, per block and activation row.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernels::dotprod {

struct BlockQ8_0F {
  int8_t qs[32];
  float d;        // exactly fp16_to_fp32 of the reference block's d
  float pad[3];   // 48 bytes: the codes of every block on the 16-byte grid of LDP
};
static_assert(sizeof(BlockQ8_0F) == 48);

// MatmulKernel::pack_lhs: m rows of lhs (row i at lhs + i * lhs_stride), k a
// multiple of 32, into m rows of k / 32 blocks.
void pack_lhs_q8_0f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);

}  // namespace kernels::dotprod
