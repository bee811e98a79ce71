// The engine's log: one line per event, to stderr by default or to a sink the
// app installs. Kernel choices, fallbacks and thread placement go here, so what
// the engine did on a device is never a guess.
#pragma once

#include <string_view>

namespace engine {

enum class LogLevel { debug = 0, info = 1, warning = 2, error = 3, off = 4 };

using LogSink = void (*)(LogLevel level, std::string_view message, void* user);

// Messages below `level` are dropped. Default: info, or $ENGINE_LOG_LEVEL
// (debug, info, warning, error, off) when set.
void set_log_level(LogLevel level);
LogLevel log_level();
// nullptr restores the default stderr sink. Thread-safe.
void set_log_sink(LogSink sink, void* user);

void log(LogLevel level, std::string_view message);
inline void log_debug(std::string_view m) { log(LogLevel::debug, m); }
inline void log_info(std::string_view m) { log(LogLevel::info, m); }
inline void log_warning(std::string_view m) { log(LogLevel::warning, m); }
inline void log_error(std::string_view m) { log(LogLevel::error, m); }

const char* log_level_name(LogLevel level);

}  // namespace engine
