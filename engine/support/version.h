// What was built: reported by the tools and the bench report.
#pragma once

#include <string>

namespace engine {

const char* version();   // "0.1.0"
const char* compiler();  // "GNU 12.2.0"
// Kernel tiers compiled into this binary, e.g. "ref" or "ref neon dotprod i8mm sve".
std::string compiled_tiers();

}  // namespace engine
