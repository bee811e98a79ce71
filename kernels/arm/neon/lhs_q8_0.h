// The Q8_0 activations of the neon and dotprod tiers' Q4_0 and Q8_0 kernels:
// the codes and scale of ref::quantize_row_q8_0, the scale stored as the float
// it widens to, in 48-byte blocks (pack_lhs_q8_0f, quantize.cpp). Against the
// 34-byte BlockQ8_0 (fp16 scale first, codes at offset 2): one LDP for the 32
// codes instead of two LDURs, and one LDR for the scale instead of a load and
// an FCVT, per block and activation row. The same blocks carry Q8_1 rows
// (pack_lhs_q8_1f: the codes and d of ref::quantize_row_q8_1, which are Q8_0's,
// and its s) for the Q4_1 and Q5_1 kernels.
#pragma once

#include <cstdint>

namespace kernels::neon {

struct BlockQ8_0F {
  int8_t qs[32];
  float d;      // exactly fp16_to_fp32 of the reference block's d
  float s;      // Q8_1 rows: exactly fp16_to_fp32 of the reference's s (0 in Q8_0 rows)
  int32_t sum;  // Q8_1 rows: the sum of the codes (0 in Q8_0 rows)
  float pad;    // 48 bytes: the codes of every block on the 16-byte grid of LDP
};
static_assert(sizeof(BlockQ8_0F) == 48);

}  // namespace kernels::neon
