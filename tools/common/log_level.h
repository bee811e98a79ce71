// The engine log's level for a command-line tool, the same rule in every tool:
//   - the tool's own default (warning for most: only problems on stderr);
//   - $ENGINE_LOG_LEVEL (debug, info, warning, error, off), when set, replaces
//     that default, as the README documents;
//   - -v / --verbose raises the level to at least info (the kernel plan and the
//     thread placement), never lowers it: ENGINE_LOG_LEVEL=debug with -v keeps
//     the debug lines.
#pragma once

#include "engine/support/log.h"

namespace tools {

// Call once in main, after the options are parsed and before the engine logs.
void set_tool_log_level(engine::LogLevel tool_default, bool verbose = false);

}  // namespace tools
