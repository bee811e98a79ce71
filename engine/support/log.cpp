#include "engine/support/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace engine {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("ENGINE_LOG_LEVEL");
  if (env == nullptr) return LogLevel::info;
  for (LogLevel l : {LogLevel::debug, LogLevel::info, LogLevel::warning, LogLevel::error, LogLevel::off}) {
    if (std::strcmp(env, log_level_name(l)) == 0) return l;
  }
  std::fprintf(stderr, "engine: WARNING: ENGINE_LOG_LEVEL='%s' is not one of debug, info, warning, error, off\n", env);
  return LogLevel::info;
}

struct State {
  std::mutex mutex;
  LogLevel level = level_from_env();
  LogSink sink = nullptr;
  void* user = nullptr;
};

State& state() {
  static State s;
  return s;
}

void stderr_sink(LogLevel level, std::string_view message) {
  std::string line = "engine: ";
  if (level >= LogLevel::warning) {
    line += level == LogLevel::warning ? "WARNING: " : "ERROR: ";
  }
  line.append(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
    case LogLevel::error:
      return "error";
    case LogLevel::off:
      return "off";
  }
  return "?";
}

void set_log_level(LogLevel level) {
  std::lock_guard lock(state().mutex);
  state().level = level;
}

LogLevel log_level() {
  std::lock_guard lock(state().mutex);
  return state().level;
}

void set_log_sink(LogSink sink, void* user) {
  std::lock_guard lock(state().mutex);
  state().sink = sink;
  state().user = user;
}

void log(LogLevel level, std::string_view message) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (level < s.level || level == LogLevel::off) return;
  if (s.sink != nullptr) {
    s.sink(level, message, s.user);
  } else {
    stderr_sink(level, message);
  }
}

}  // namespace engine
