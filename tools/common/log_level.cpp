#include "tools/common/log_level.h"

#include <algorithm>
#include <cstdlib>

namespace tools {

void set_tool_log_level(engine::LogLevel tool_default, bool verbose) {
  // The engine reads $ENGINE_LOG_LEVEL on first use (and warns about a value it
  // does not know, keeping info): when it is set, that level stands.
  engine::LogLevel level = std::getenv("ENGINE_LOG_LEVEL") != nullptr ? engine::log_level() : tool_default;
  if (verbose) level = std::min(level, engine::LogLevel::info);
  engine::set_log_level(level);
}

}  // namespace tools
