// The built-in families, one file each, registered in registry.cpp.
#pragma once

#include "engine/arch/arch.h"
#include "engine/model/model_config.h"

namespace engine::arch {

Architecture llama();
Architecture qwen2();
Architecture qwen3();
Architecture phi3();
Architecture smollm3();
Architecture granite();
Architecture gemma2();
Architecture gemma3();
Architecture gemma4();
Architecture lfm2();
Architecture qwen35();

}  // namespace engine::arch
