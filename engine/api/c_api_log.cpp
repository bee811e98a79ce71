// The C API's logging entry points over engine/support/log.h: the level, and a C
// callback in place of the stderr sink.
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>

#include "engine/api/engine.h"
#include "engine/api/last_error.h"
#include "engine/support/log.h"

namespace {

// The C enum is the engine's, value for value (log.h), so a level crosses the
// API by a cast.
static_assert(static_cast<int>(ENGINE_LOG_DEBUG) == static_cast<int>(engine::LogLevel::debug));
static_assert(static_cast<int>(ENGINE_LOG_INFO) == static_cast<int>(engine::LogLevel::info));
static_assert(static_cast<int>(ENGINE_LOG_WARNING) == static_cast<int>(engine::LogLevel::warning));
static_assert(static_cast<int>(ENGINE_LOG_ERROR) == static_cast<int>(engine::LogLevel::error));
static_assert(static_cast<int>(ENGINE_LOG_OFF) == static_cast<int>(engine::LogLevel::off));

// One installed callback. The engine's sink gets a string_view and a C
// callback needs a NUL-terminated string; the log calls its sink one message
// at a time (under its lock), so one buffer serves every message.
struct CallbackSink {
  engine_log_callback callback;
  void* user;
  std::string buffer;
};

void forward(engine::LogLevel level, std::string_view message, void* sink_ptr) {
  auto* sink = static_cast<CallbackSink*>(sink_ptr);
  sink->buffer.assign(message);
  sink->callback(static_cast<engine_log_level>(level), sink->buffer.c_str(), sink->user);
}

// The installed sink, owned here. set_log_sink returns only once no message is
// being delivered to the previous sink, so it can be freed right after. A
// plain pointer, never freed at exit: a thread or static destructor may still
// log while the process ends.
std::mutex g_install_mutex;
CallbackSink* g_installed = nullptr;

}  // namespace

extern "C" {

engine_status engine_set_log_level(engine_log_level level) {
  const int value = static_cast<int>(level);
  if (value < ENGINE_LOG_DEBUG || value > ENGINE_LOG_OFF) {
    return engine::api_detail::fail(ENGINE_ERR_INVALID_ARGUMENT,
                                    "engine_set_log_level: " + std::to_string(value) +
                                        " is not a level (ENGINE_LOG_DEBUG 0 .. ENGINE_LOG_OFF 4)");
  }
  engine::api_detail::clear_last_error();
  engine::set_log_level(static_cast<engine::LogLevel>(value));
  return ENGINE_OK;
}

engine_status engine_set_log_callback(engine_log_callback callback, void* user) {
  std::lock_guard lock(g_install_mutex);
  std::unique_ptr<CallbackSink> next;
  if (callback != nullptr) {
    next.reset(new (std::nothrow) CallbackSink{callback, user, {}});
    if (!next) return engine::api_detail::fail(ENGINE_ERR_OUT_OF_MEMORY, "engine_set_log_callback: out of memory");
  }
  engine::api_detail::clear_last_error();
  engine::set_log_sink(next ? &forward : nullptr, next.get());
  delete g_installed;  // no longer called
  g_installed = next.release();
  return ENGINE_OK;
}

}  // extern "C"
