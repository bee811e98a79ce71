// The C API of a session's tokens (prompt reuse, truncation), saved sessions
// and cancellation (engine.h), over engine::Session and session_file.h.
#include <algorithm>
#include <span>
#include <string>

#include "engine/api/c_api_objects.h"
#include "engine/api/engine.h"
#include "engine/runtime/session_file.h"

using namespace engine::api_detail;  // NOLINT: the objects and steps of c_api_objects.h

extern "C" {

engine_status engine_prefill_prompt(engine_session* session, const int32_t* tokens, size_t n, size_t* n_reused) {
  if (n_reused != nullptr) *n_reused = 0;
  if (tokens == nullptr || n == 0) return evaluate("engine_prefill_prompt", session, tokens, n);
  return on_session("engine_prefill_prompt", session, [&](engine::Session& s) {
    const uint32_t reused = s.eval_prompt({tokens, n});
    if (n_reused != nullptr) *n_reused = reused;
    return ENGINE_OK;
  });
}

engine_status engine_session_truncate(engine_session* session, uint32_t n) {
  return on_session("engine_session_truncate", session, [&](engine::Session& s) {
    s.truncate(n);
    return ENGINE_OK;
  });
}

engine_status engine_session_tokens(engine_session* session, int32_t* tokens, size_t capacity, size_t* n) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_session_tokens", "session");
  if (n == nullptr || (tokens == nullptr && capacity > 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_tokens: n or tokens is null");
  }
  const std::span<const int32_t> held = s->session->tokens();
  *n = held.size();
  std::copy_n(held.begin(), std::min(capacity, held.size()), tokens);
  if (held.size() > capacity) {
    return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_session_tokens: the session holds " + std::to_string(held.size()) +
                                                 " tokens, room for " + std::to_string(capacity));
  }
  return ENGINE_OK;
}

engine_status engine_session_memory_info(engine_session* session, engine_memory_info* out) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_session_memory_info", "session");
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_memory_info: out is null");
  const engine::StateMemory m = engine::state_memory(s->session->kv_cache(), s->session->checkpoints());
  *out = engine_memory_info{m.attention_bytes, m.recurrent_bytes,    m.checkpoint_bytes,
                            m.n_attention_layers, m.n_recurrent_layers, m.n_checkpoints};
  return ENGINE_OK;
}

uint64_t engine_session_n_evaluated(const engine_session* session) {
  uint64_t n = 0;
  handle_table().peek(id_of(session), Kind::session,
                      [&](void* o) { n = static_cast<const SessionObject*>(o)->n_evaluated.load(); });
  return n;
}

engine_status engine_session_save(engine_session* session, const char* path) {
  if (path == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_save: path is null");
  return on_session("engine_session_save", session, [&](engine::Session& s) {
    engine::save_session(s, path);
    return ENGINE_OK;
  });
}

engine_status engine_session_load(engine_session* session, const char* path) {
  if (path == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_load: path is null");
  return on_session("engine_session_load", session, [&](engine::Session& s) {
    engine::load_session(s, path);
    return ENGINE_OK;
  });
}

engine_status engine_session_set_abort(engine_session* session, engine_abort_callback callback, void* user_data) {
  return on_session("engine_session_set_abort", session, [&](engine::Session& s) {
    s.set_abort(callback, user_data);
    return ENGINE_OK;
  });
}

}  // extern "C"
