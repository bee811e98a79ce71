// The forward pass's guard against a bad model: NaN or Inf in the residual
// stream after a layer, or in the logits, becomes an engine::ModelError that
// names the file, the layer and the position, instead of garbage text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace engine {

class Model;

// Throws ModelError when values (rows x row_size floats, the first row at
// position first_position) hold a NaN or Inf. layer >= 0: the residual stream
// after that layer; layer < 0: the logits of the output layer.
void check_finite(const Model& model, const float* values, uint32_t rows, size_t row_size, uint32_t first_position,
                  int layer);

}  // namespace engine
