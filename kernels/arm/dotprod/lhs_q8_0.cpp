// The dotprod tier's Q8_0 activations: see lhs_q8_0.h. The codes and scale are
// the neon tier's quantizer's (the reference's bytes), then laid out again.
#include "kernels/arm/dotprod/lhs_q8_0.h"

#include <cstring>

#include "kernels/arm/neon/quantize.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::dotprod {

void pack_lhs_q8_0f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<BlockQ8_0F*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < k / ref::QK; ++b, ++out) {
      ref::BlockQ8_0 q;
      neon::quantize_row_q8_0(lhs + i * lhs_stride + b * ref::QK, &q, ref::QK);
      std::memcpy(out->qs, q.qs, sizeof out->qs);
      out->d = arm::fp16_to_f32(q.d);
      std::memset(out->pad, 0, sizeof out->pad);
    }
  }
}

}  // namespace kernels::dotprod
