// The libFuzzer entry point of one target, chosen at compile time
// (ENGINE_FUZZ_TARGET, e.g. engine_fuzz::gguf_reader).
#include <cstddef>
#include <cstdint>

#include "engine/support/log.h"
#include "tests/fuzz/targets.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Bad input is the normal case here: thousands of warnings per second would
  // cost more than the target itself.
  engine::set_log_level(engine::LogLevel::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return ENGINE_FUZZ_TARGET(data, size); }
