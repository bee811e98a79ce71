// Builds the bytes of a small GGUF model from a fuzzer's choices: a header
// that is always well formed, with hyperparameters, tensors (presence, shape,
// type, values) and a vocabulary that are consistent by default and bent by
// the input's bytes (a missing tensor, a shape off by one, a NaN in a norm, a
// key of the wrong type, a duplicate token...). An input of zeros gives a
// consistent F32 llama model; the seed corpus names a few more.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

namespace engine_fuzz {

std::vector<uint8_t> synthesize_model(FuzzInput& in);

}  // namespace engine_fuzz
