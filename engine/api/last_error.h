// The per-thread message behind engine_last_error(), shared by the C API's
// source files.
#pragma once

#include <string>

#include "engine/api/engine.h"

namespace engine::api_detail {

// Sets the calling thread's message and returns `status` (for `return fail(...)`).
engine_status fail(engine_status status, std::string message);
// Clears the message at the start of a call.
void clear_last_error();

}  // namespace engine::api_detail
