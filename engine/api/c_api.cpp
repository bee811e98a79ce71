// The C API over engine::Model, Session, Tokenizer and Sampler. Every entry
// point validates its handles against the live set, catches every exception
// and turns it into a status plus a per-thread message: nothing escapes into a
// C caller, nothing aborts the host app.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

#include "engine/api/engine.h"
#include "engine/error.h"
#include "engine/model.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "engine/threads/topology.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/version.h"
#include "gguf/file.h"

struct engine_model {
  std::unique_ptr<engine::Model> model;
  engine::Tokenizer tokenizer;
  std::atomic<int> sessions{0};
};

struct engine_session {
  engine_model* owner = nullptr;
  std::unique_ptr<engine::ThreadPool> pool;
  std::unique_ptr<engine::Session> session;
  std::atomic<bool> busy{false};
  bool has_logits = false;
};

struct engine_sampler {
  std::unique_ptr<engine::Sampler> sampler;
  std::atomic<bool> busy{false};
};

namespace {

thread_local std::string t_last_error;

// Live handles, so a freed or foreign pointer is an error and not a crash.
struct Registry {
  std::mutex mutex;
  std::unordered_set<const void*> live;
};
Registry& registry() {
  static Registry r;
  return r;
}
void track(const void* h) {
  std::lock_guard lock(registry().mutex);
  registry().live.insert(h);
}
bool untrack(const void* h) {
  std::lock_guard lock(registry().mutex);
  return registry().live.erase(h) == 1;
}
bool is_live(const void* h) {
  std::lock_guard lock(registry().mutex);
  return h != nullptr && registry().live.count(h) == 1;
}

engine_status fail(engine_status status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

// Runs fn, mapping exceptions to statuses.
template <class Fn>
engine_status guarded(const char* what, Fn&& fn) {
  try {
    t_last_error.clear();
    return fn();
  } catch (const gguf::Error& e) {
    return fail(ENGINE_ERR_MODEL, e.what());
  } catch (const engine::Error& e) {
    const std::string msg = e.what();
    return fail(msg.rfind("context full", 0) == 0 ? ENGINE_ERR_CONTEXT_FULL : ENGINE_ERR_INVALID_ARGUMENT, msg);
  } catch (const std::bad_alloc&) {
    return fail(ENGINE_ERR_OUT_OF_MEMORY, std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ENGINE_ERR_INTERNAL, std::string(what) + ": " + e.what());
  } catch (...) {
    return fail(ENGINE_ERR_INTERNAL, std::string(what) + ": unknown error");
  }
}

// Marks a session or sampler busy for the duration of a call; a second thread
// gets ENGINE_ERR_BUSY instead of a data race.
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<bool>& flag) : flag_(flag), owned_(!flag.exchange(true)) {}
  ~BusyGuard() {
    if (owned_) flag_.store(false);
  }
  bool owned() const { return owned_; }

 private:
  std::atomic<bool>& flag_;
  bool owned_;
};

engine_status bad_handle(const char* what) {
  return fail(ENGINE_ERR_INVALID_HANDLE, std::string(what) + ": invalid, freed or null handle");
}
engine_status busy(const char* what) {
  return fail(ENGINE_ERR_BUSY, std::string(what) + ": the session is in use by another thread");
}

}  // namespace

extern "C" {

const char* engine_last_error(void) { return t_last_error.c_str(); }

const char* engine_status_name(engine_status s) {
  switch (s) {
    case ENGINE_OK: return "ok";
    case ENGINE_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ENGINE_ERR_INVALID_HANDLE: return "invalid handle";
    case ENGINE_ERR_MODEL: return "bad model file";
    case ENGINE_ERR_CONTEXT_FULL: return "context full";
    case ENGINE_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case ENGINE_ERR_BUSY: return "busy";
    case ENGINE_ERR_IN_USE: return "in use";
    case ENGINE_ERR_STATE: return "call out of order";
    case ENGINE_ERR_OUT_OF_MEMORY: return "out of memory";
    case ENGINE_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* engine_version(void) { return engine::version(); }

engine_status engine_model_load(const char* path, engine_model** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load: out is null");
  *out = nullptr;
  if (path == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load: path is null");
  return guarded("engine_model_load", [&] {
    auto model = engine::Model::load(path);
    auto tokenizer = engine::Tokenizer::from_gguf(model->file());
    auto* m = new engine_model{std::move(model), std::move(tokenizer), {}};
    track(m);
    *out = m;
    return ENGINE_OK;
  });
}

engine_status engine_model_free(engine_model* model) {
  if (!is_live(model)) return bad_handle("engine_model_free");
  if (model->sessions.load() != 0) {
    return fail(ENGINE_ERR_IN_USE, "engine_model_free: the model still has " +
                                       std::to_string(model->sessions.load()) + " session(s); free them first");
  }
  if (!untrack(model)) return bad_handle("engine_model_free");
  delete model;
  return ENGINE_OK;
}

int32_t engine_model_n_vocab(const engine_model* m) {
  return is_live(m) ? static_cast<int32_t>(m->model->config().n_vocab) : -1;
}
int32_t engine_model_n_ctx_train(const engine_model* m) {
  return is_live(m) ? static_cast<int32_t>(m->model->config().n_ctx_train) : -1;
}
int32_t engine_model_bos(const engine_model* m) { return is_live(m) ? m->tokenizer.bos() : -1; }
int32_t engine_model_eos(const engine_model* m) { return is_live(m) ? m->tokenizer.eos() : -1; }
bool engine_model_is_end_of_generation(const engine_model* m, int32_t token) {
  return is_live(m) && token >= 0 && token < m->tokenizer.n_vocab() && m->tokenizer.is_end_of_generation(token);
}

engine_status engine_tokenize(const engine_model* m, const char* text, size_t len, bool add_bos, bool parse_special,
                              int32_t* tokens, size_t capacity, size_t* n_tokens) {
  if (!is_live(m)) return bad_handle("engine_tokenize");
  if ((text == nullptr && len != 0) || n_tokens == nullptr || (tokens == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_tokenize: null text, tokens or n_tokens");
  }
  return guarded("engine_tokenize", [&] {
    const auto ids = m->tokenizer.encode(std::string_view(text == nullptr ? "" : text, len), add_bos, parse_special);
    *n_tokens = ids.size();
    if (ids.size() > capacity) {
      return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_tokenize: " + std::to_string(ids.size()) +
                                                   " tokens do not fit in a buffer of " + std::to_string(capacity));
    }
    std::copy(ids.begin(), ids.end(), tokens);
    return ENGINE_OK;
  });
}

engine_status engine_token_to_piece(const engine_model* m, int32_t token, char* buf, size_t capacity, size_t* len) {
  if (!is_live(m)) return bad_handle("engine_token_to_piece");
  if (len == nullptr || (buf == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_token_to_piece: null buf or len");
  }
  return guarded("engine_token_to_piece", [&] {
    const std::string piece = m->tokenizer.token_piece(token);
    *len = piece.size();
    if (piece.size() > capacity) {
      return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_token_to_piece: the piece has " +
                                                   std::to_string(piece.size()) + " bytes, the buffer " +
                                                   std::to_string(capacity));
    }
    std::memcpy(buf, piece.data(), piece.size());
    return ENGINE_OK;
  });
}

engine_session_params engine_session_default_params(void) {
  return engine_session_params{0, 512, ENGINE_KV_F16, 0, nullptr};
}

engine_status engine_session_create(engine_model* m, const engine_session_params* params, engine_session** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: out is null");
  *out = nullptr;
  if (!is_live(m)) return bad_handle("engine_session_create");
  const engine_session_params p = params != nullptr ? *params : engine_session_default_params();
  if (p.kv_type != ENGINE_KV_F16 && p.kv_type != ENGINE_KV_F32) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: unknown kv_type");
  }
  if (p.n_threads < 0) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: n_threads < 0");
  return guarded("engine_session_create", [&] {
    auto s = std::make_unique<engine_session>();
    engine::ThreadOptions threads;
    threads.n_threads = static_cast<size_t>(p.n_threads);
    if (p.cpus != nullptr) threads.set_cpus(p.cpus);
    const engine::ThreadPlan plan = engine::ThreadPlan::make(engine::CpuTopology::detect(), threads);
    s->pool = std::make_unique<engine::ThreadPool>(plan);
    engine::SessionParams sp;
    sp.n_ctx = p.n_ctx;
    sp.n_batch = p.n_batch != 0 ? p.n_batch : 512;
    sp.kv_type = p.kv_type == ENGINE_KV_F32 ? engine::KvType::f32 : engine::KvType::f16;
    sp.pool = s->pool.get();
    s->session = std::make_unique<engine::Session>(*m->model, sp);
    s->owner = m;
    m->sessions.fetch_add(1);
    track(s.get());
    *out = s.release();
    return ENGINE_OK;
  });
}

engine_status engine_session_free(engine_session* s) {
  if (!is_live(s)) return bad_handle("engine_session_free");
  {
    BusyGuard guard(s->busy);
    if (!guard.owned()) return busy("engine_session_free");
    if (!untrack(s)) return bad_handle("engine_session_free");
    s->owner->sessions.fetch_sub(1);
  }
  delete s;
  return ENGINE_OK;
}

engine_status engine_prefill(engine_session* s, const int32_t* tokens, size_t n) {
  if (!is_live(s)) return bad_handle("engine_prefill");
  if (tokens == nullptr || n == 0) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_prefill: no tokens");
  BusyGuard guard(s->busy);
  if (!guard.owned()) return busy("engine_prefill");
  return guarded("engine_prefill", [&] {
    s->session->eval({tokens, n});
    s->has_logits = true;
    return ENGINE_OK;
  });
}

engine_status engine_decode(engine_session* s, int32_t token) { return engine_prefill(s, &token, 1); }

engine_status engine_logits(engine_session* s, const float** logits, size_t* n_vocab) {
  if (!is_live(s)) return bad_handle("engine_logits");
  if (logits == nullptr || n_vocab == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_logits: null output");
  BusyGuard guard(s->busy);
  if (!guard.owned()) return busy("engine_logits");
  if (!s->has_logits) return fail(ENGINE_ERR_STATE, "engine_logits: nothing evaluated yet (call engine_prefill)");
  *logits = s->session->logits().data();
  *n_vocab = s->session->logits().size();
  return ENGINE_OK;
}

uint32_t engine_session_n_past(const engine_session* s) { return is_live(s) ? s->session->n_past() : 0; }

engine_status engine_session_reset(engine_session* s) {
  if (!is_live(s)) return bad_handle("engine_session_reset");
  BusyGuard guard(s->busy);
  if (!guard.owned()) return busy("engine_session_reset");
  s->session->reset();
  s->has_logits = false;
  return ENGINE_OK;
}

engine_sampler_params engine_sampler_default_params(void) {
  const engine::SamplerParams d;
  return engine_sampler_params{d.temperature, d.top_k, d.top_p, d.min_p, d.repeat_penalty, d.repeat_last_n, d.seed};
}

engine_status engine_sampler_create(const engine_sampler_params* params, engine_sampler** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_sampler_create: out is null");
  *out = nullptr;
  const engine_sampler_params p = params != nullptr ? *params : engine_sampler_default_params();
  return guarded("engine_sampler_create", [&] {
    engine::SamplerParams sp{p.temperature, p.top_k, p.top_p, p.min_p, p.repeat_penalty, p.repeat_last_n, p.seed};
    auto s = std::make_unique<engine_sampler>();
    s->sampler = std::make_unique<engine::Sampler>(sp);
    track(s.get());
    *out = s.release();
    return ENGINE_OK;
  });
}

engine_status engine_sampler_free(engine_sampler* s) {
  if (!is_live(s)) return bad_handle("engine_sampler_free");
  {
    BusyGuard guard(s->busy);
    if (!guard.owned()) return busy("engine_sampler_free");
    if (!untrack(s)) return bad_handle("engine_sampler_free");
  }
  delete s;
  return ENGINE_OK;
}

engine_status engine_sample(engine_sampler* sampler, engine_session* s, int32_t* token) {
  if (!is_live(sampler)) return bad_handle("engine_sample (sampler)");
  if (!is_live(s)) return bad_handle("engine_sample (session)");
  if (token == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_sample: token is null");
  BusyGuard session_guard(s->busy);
  if (!session_guard.owned()) return busy("engine_sample");
  BusyGuard sampler_guard(sampler->busy);
  if (!sampler_guard.owned()) return busy("engine_sample (sampler)");
  if (!s->has_logits) return fail(ENGINE_ERR_STATE, "engine_sample: nothing evaluated yet (call engine_prefill)");
  return guarded("engine_sample", [&] {
    const auto n_vocab = s->owner->model->config().n_vocab;
    const auto logits = s->session->logits();
    *token = sampler->sampler->sample(logits.subspan(logits.size() - n_vocab));
    sampler->sampler->accept(*token);
    return ENGINE_OK;
  });
}

engine_status engine_sampler_accept(engine_sampler* sampler, int32_t token) {
  if (!is_live(sampler)) return bad_handle("engine_sampler_accept");
  BusyGuard guard(sampler->busy);
  if (!guard.owned()) return busy("engine_sampler_accept");
  sampler->sampler->accept(token);
  return ENGINE_OK;
}

}  // extern "C"
