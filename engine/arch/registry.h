// The architectures the engine knows, by general.architecture name: the
// built-in families (registry.cpp) and any registered at run time (tests).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/arch.h"

namespace engine::arch {

// nullptr when `name` is not known.
const Architecture* find_architecture(std::string_view name);
// "llama, qwen2, qwen3", in registration order.
std::string architecture_names();
std::vector<const Architecture*> architectures();
// Adds a family, or replaces the one of the same name. Descriptions live as
// long as the process; pointers to them stay valid.
void register_architecture(Architecture a);

}  // namespace engine::arch
