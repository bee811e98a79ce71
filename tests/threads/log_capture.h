// Captures the engine's log lines during a test (engine::set_log_sink).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/support/log.h"

namespace threads_test {

class LogCapture {
 public:
  LogCapture() : previous_level_(engine::log_level()) {
    engine::set_log_level(engine::LogLevel::info);
    engine::set_log_sink(&LogCapture::sink, this);
  }
  ~LogCapture() {
    engine::set_log_sink(nullptr, nullptr);
    engine::set_log_level(previous_level_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> at(engine::LogLevel level) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [l, m] : lines_) {
      if (l == level) out.push_back(m);
    }
    return out;
  }
  std::vector<std::string> warnings() { return at(engine::LogLevel::warning); }

 private:
  static void sink(engine::LogLevel level, std::string_view message, void* user) {
    auto* self = static_cast<LogCapture*>(user);
    std::lock_guard lock(self->mutex_);
    self->lines_.emplace_back(level, std::string(message));
  }

  engine::LogLevel previous_level_;
  std::mutex mutex_;
  std::vector<std::pair<engine::LogLevel, std::string>> lines_;
};

inline bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace threads_test
