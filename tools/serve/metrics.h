// What /metrics reports, in Prometheus' text format: requests by path and
// status, tokens evaluated and generated (and reused from a session's cache),
// the time spent on each, refusals (503) and clients that left mid-request,
// and the sessions busy and requests waiting now.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace serve {

class Metrics {
 public:
  void count_response(const std::string& path, int status);
  void add_turn(size_t prompt_tokens, size_t reused_tokens, size_t completion_tokens, double prompt_seconds,
                double generation_seconds);
  void count_disconnect() { ++disconnects_; }
  std::string prometheus(size_t slots, size_t busy, size_t waiting) const;

 private:
  std::atomic<uint64_t> prompt_tokens_{0}, reused_tokens_{0}, completion_tokens_{0}, disconnects_{0};
  std::atomic<uint64_t> prompt_us_{0}, generation_us_{0};
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> responses_;
};

}  // namespace serve
