#include "engine/runtime/finite_check.h"

#include <cmath>

#include "engine/support/error.h"
#include "engine/model/model.h"
#include "engine/ops/ops.h"

namespace engine {

void check_finite(const Model& model, const float* values, uint32_t rows, size_t row_size, uint32_t first_position,
                  int layer) {
  const size_t count = size_t{rows} * row_size;
  const size_t bad = ops::first_non_finite(values, count);
  if (bad == count) return;
  const float v = values[bad];
  const std::string what = std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  const std::string where = "position " + std::to_string(first_position + bad / row_size) + ", ";
  if (layer < 0) {
    throw ModelError(model.file().path() + ": the output layer (output_norm.weight, " + model.output().name +
                     ") produced " + what + " in the logits (" + where + "token id " + std::to_string(bad % row_size) +
                     "); the model's weights are likely corrupt");
  }
  throw ModelError(model.file().path() + ": layer " + std::to_string(layer) + " (blk." + std::to_string(layer) +
                   ".*) produced " + what + " in the residual stream (" + where + "element " +
                   std::to_string(bad % row_size) + "); the model's weights are likely corrupt");
}

}  // namespace engine
