#include "tools/serve/metrics.h"

#include <sstream>

namespace serve {

void Metrics::count_response(const std::string& path, int status) {
  const std::lock_guard lock(mutex_);
  // Paths the server does not know are one label: a scan must not grow the map.
  const bool known = path == "/" || path == "/health" || path == "/metrics" || path == "/v1/models" ||
                     path == "/v1/chat/completions" || path == "/v1/completions";
  ++responses_[{known ? path : "other", status}];
}

void Metrics::add_turn(size_t prompt_tokens, size_t reused_tokens, size_t completion_tokens, double prompt_seconds,
                       double generation_seconds) {
  prompt_tokens_ += prompt_tokens;
  reused_tokens_ += reused_tokens;
  completion_tokens_ += completion_tokens;
  prompt_us_ += static_cast<uint64_t>(prompt_seconds * 1e6);
  generation_us_ += static_cast<uint64_t>(generation_seconds * 1e6);
}

std::string Metrics::prometheus(size_t slots, size_t busy, size_t waiting) const {
  std::ostringstream o;
  auto metric = [&](const char* name, const char* type, const char* help, auto value) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n' << name << ' ' << value << '\n';
  };
  o << "# HELP serve_requests_total Responses by path and HTTP status.\n# TYPE serve_requests_total counter\n";
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [key, n] : responses_) {
      o << "serve_requests_total{path=\"" << key.first << "\",status=\"" << key.second << "\"} " << n << '\n';
    }
  }
  metric("serve_prompt_tokens_total", "counter", "Prompt tokens of the requests, evaluated or reused.",
         prompt_tokens_.load());
  metric("serve_prompt_tokens_reused_total", "counter", "Prompt tokens a session already held (not evaluated).",
         reused_tokens_.load());
  metric("serve_completion_tokens_total", "counter", "Tokens generated.", completion_tokens_.load());
  metric("serve_prompt_seconds_total", "counter", "Time spent evaluating prompts.", prompt_us_.load() / 1e6);
  metric("serve_generation_seconds_total", "counter", "Time spent generating.", generation_us_.load() / 1e6);
  metric("serve_client_disconnects_total", "counter", "Requests whose client left before the end.",
         disconnects_.load());
  metric("serve_sessions", "gauge", "Sessions (--parallel).", slots);
  metric("serve_sessions_busy", "gauge", "Sessions generating now.", busy);
  metric("serve_requests_waiting", "gauge", "Requests waiting for a session.", waiting);
  return o.str();
}

}  // namespace serve
