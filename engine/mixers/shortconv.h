// The gated short-convolution mixer of LFM2 (llama.cpp's src/models/lfm2.cpp):
//   B, C, x = split(xn W_in^T)                      three (n, n_embd) blocks of one (n, 3 n_embd) product
//   y = C * conv(B * x)                             a depthwise causal convolution of K taps per channel
//   xn = y W_out^T
// The convolution of position t reads B * x of positions t - K + 1 .. t; the
// K - 1 before a batch come from the layer's state (engine/runtime/kv_cache.h,
// ConvCache), which the batch leaves holding its own last K - 1.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model_weights.h"
#include "engine/runtime/compute.h"

namespace engine {

struct ModelConfig;

// The convolution of n tokens over d channels, channels first .. last - 1:
//   bcx:    (n, 3 d) each token's B, C and x; its x is replaced by B * x
//   kernel: (d, taps) each channel's taps, the oldest position's first
//   state:  (taps - 1, d) B * x of the positions before the batch, oldest
//           first; afterwards those of the batch's last taps - 1 positions
//   y:      (n, d) C * conv(B * x)
// The scalar form, and the reference its vectorized twins are tested against.
void shortconv_rows_ref(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                        float* bcx, uint32_t n, float* y);

class ShortConvMixer {
 public:
  ShortConvMixer(const ModelConfig& c, uint32_t n_batch);

  // Floats of scratch per batch row: the in_proj output and y (0 when no
  // layer of c is a short convolution).
  static uint64_t row_floats(const ModelConfig& c);

  // xn (n, n_embd): the normalized input of n tokens, replaced by the block's
  // output; state as above, updated.
  void forward(Compute& compute, uint32_t taps, const LayerWeights& w, float* state, uint32_t n, float* xn);

 private:
  uint32_t d_;
  std::vector<float> bcx_;  // (B, 3 n_embd) B, C and x of each token
  std::vector<float> y_;    // (B, n_embd) C * conv(B * x)
};

}  // namespace engine
