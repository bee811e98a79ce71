// The C API over engine::Model, Session, Tokenizer and Sampler. Handles are
// numbers looked up in a table on every call (handle_table.h); every entry
// point catches every exception and turns it into a status plus a per-thread
// message: nothing escapes into a C caller, nothing aborts the host app.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "engine/api/c_api_objects.h"
#include "engine/api/engine.h"
#include "engine/support/version.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/topology.h"

using namespace engine::api_detail;  // NOLINT: the objects and steps of c_api_objects.h

// engine_kv_type and engine::KvType name the same types by the same numbers.
static_assert(static_cast<int>(engine::CacheState::off) == ENGINE_CACHE_OFF &&
              static_cast<int>(engine::CacheState::hit) == ENGINE_CACHE_HIT &&
              static_cast<int>(engine::CacheState::written) == ENGINE_CACHE_WRITTEN &&
              static_cast<int>(engine::CacheState::write_failed) == ENGINE_CACHE_WRITE_FAILED);
static_assert(static_cast<int>(engine::KvType::f16) == ENGINE_KV_F16 &&
              static_cast<int>(engine::KvType::f32) == ENGINE_KV_F32 &&
              static_cast<int>(engine::KvType::q8_0) == ENGINE_KV_Q8_0 &&
              static_cast<int>(engine::KvType::q4_0) == ENGINE_KV_Q4_0);

namespace {

thread_local std::string t_last_error;

}  // namespace

namespace engine::api_detail {

engine_status fail(engine_status status, std::string message) {
  t_last_error = std::move(message);
  return status;
}
void clear_last_error() { t_last_error.clear(); }

}  // namespace engine::api_detail

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
    case ENGINE_ERR_ABORTED: return "aborted";
    case ENGINE_ERR_FILE: return "saved session file";
    case ENGINE_ERR_TEMPLATE: return "chat template";
    case ENGINE_ERR_CANCELLED: return "cancelled";
  }
  return "unknown status";
}

const char* engine_version(void) { return engine::version(); }

engine_load_options engine_load_default_options(void) {
  engine_load_options o{};
  o.size = sizeof o;
  return o;
}

engine_status engine_model_load(const char* path, engine_model** out) {
  return engine_model_load_ex(path, nullptr, out);
}

engine_status engine_model_load_ex(const char* path, const engine_load_options* options, engine_model** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load: out is null");
  *out = nullptr;
  if (path == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load: path is null");
  // The caller's struct over the defaults, as far as it reaches.
  engine_load_options o = engine_load_default_options();
  if (options != nullptr) {
    if (options->size < offsetof(engine_load_options, progress) + sizeof o.progress || options->size > sizeof o) {
      return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load_ex: options->size " +
                                                   std::to_string(options->size) + " is not that of an " +
                                                   "engine_load_options (" + std::to_string(sizeof o) +
                                                   " bytes here); set it with engine_load_default_options");
    }
    std::memcpy(&o, options, options->size);
  }
  engine::LoadOptions load;
  if (o.progress != nullptr) {
    load.progress = [&o](double fraction, const char* phase) {
      return o.progress(static_cast<float>(fraction), phase, o.user_data);
    };
  }
  load.cache_dir = o.cache_dir != nullptr ? o.cache_dir : engine::cache_dir_from_env();
  load.measure_read = o.measure_read;
  return guarded("engine_model_load", [&] {
    std::unique_ptr<ModelObject> object;
    try {
      auto model = engine::Model::load(path, load);
      auto tokenizer = engine::Tokenizer::from_gguf(model->file());
      object.reset(new ModelObject{std::move(model), std::move(tokenizer), {}, {}, {}});
    } catch (const engine::ResourceError&) {
      throw;
    } catch (const engine::Cancelled& e) {
      return fail(ENGINE_ERR_CANCELLED, e.what());
    } catch (const engine::Error& e) {
      return fail(ENGINE_ERR_MODEL, e.what());  // the vocabulary is part of the file too
    }
    *out = handle_of<engine_model>(handle_table().add(Kind::model, object.get()));
    object.release();
    return ENGINE_OK;
  });
}

engine_status engine_model_free(engine_model* model) {
  void* object = nullptr;
  int sessions = 0;
  const Status s = handle_table().remove(id_of(model), Kind::model, &object, [&](void* o) {
    sessions = static_cast<ModelObject*>(o)->sessions.load();
    return sessions == 0;
  });
  if (s == Status::refused) {
    return fail(ENGINE_ERR_IN_USE, "engine_model_free: the model still has " + std::to_string(sessions) +
                                       " session(s); free them first");
  }
  if (s != Status::ok) return refused(s, "engine_model_free", "model");
  delete static_cast<ModelObject*>(object);
  return ENGINE_OK;
}

engine_status engine_model_load_stats(const engine_model* m, engine_load_stats* out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_model_load_stats: out is null");
  const bool found = handle_table().peek(id_of(m), Kind::model, [&](void* object) {
    const engine::LoadStats& s = static_cast<const ModelObject*>(object)->model->load_stats();
    *out = engine_load_stats{s.load_seconds, s.repack_seconds, s.cache_seconds,
                             s.read_seconds, s.file_bytes,     static_cast<engine_cache_state>(s.cache)};
  });
  if (!found) return fail(ENGINE_ERR_INVALID_HANDLE, "engine_model_load_stats: invalid, freed or null handle");
  return ENGINE_OK;
}

int32_t engine_model_n_vocab(const engine_model* m) {
  return model_property(m, -1, [](const ModelObject& o) { return static_cast<int32_t>(o.model->config().n_vocab); });
}
int32_t engine_model_n_ctx_train(const engine_model* m) {
  return model_property(m, -1,
                        [](const ModelObject& o) { return static_cast<int32_t>(o.model->config().n_ctx_train); });
}
int32_t engine_model_bos(const engine_model* m) {
  return model_property(m, -1, [](const ModelObject& o) { return o.tokenizer.bos(); });
}
bool engine_model_add_bos(const engine_model* m) {
  return model_property(m, false, [](const ModelObject& o) { return o.tokenizer.add_bos() && o.tokenizer.bos() >= 0; });
}
int32_t engine_model_eos(const engine_model* m) {
  return model_property(m, -1, [](const ModelObject& o) { return o.tokenizer.eos(); });
}
bool engine_model_is_end_of_generation(const engine_model* m, int32_t token) {
  return model_property(m, false, [&](const ModelObject& o) { return o.tokenizer.is_end_of_generation(token); });
}

engine_status engine_tokenize(const engine_model* m, const char* text, size_t len, bool add_bos, bool parse_special,
                              int32_t* tokens, size_t capacity, size_t* n_tokens) {
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_tokenize", "model");
  if ((text == nullptr && len != 0) || n_tokens == nullptr || (tokens == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_tokenize: null text, tokens or n_tokens");
  }
  return guarded("engine_tokenize", [&] {
    const auto ids = model->tokenizer.encode(std::string_view(text == nullptr ? "" : text, len), add_bos, parse_special);
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
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_token_to_piece", "model");
  if (len == nullptr || (buf == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_token_to_piece: null buf or len");
  }
  return guarded("engine_token_to_piece", [&] {
    const std::string piece = model->tokenizer.token_piece(token);
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

engine_status engine_detokenize(const engine_model* m, const int32_t* tokens, size_t n, char* buf, size_t capacity,
                                size_t* len) {
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_detokenize", "model");
  if (len == nullptr || (buf == nullptr && capacity != 0) || (tokens == nullptr && n != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_detokenize: null tokens, buf or len");
  }
  return guarded("engine_detokenize", [&] {
    const std::string text = model->tokenizer.decode(std::span<const int32_t>(tokens, n));
    *len = text.size();
    if (text.size() > capacity) {
      return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_detokenize: the text has " + std::to_string(text.size()) +
                                                   " bytes, the buffer " + std::to_string(capacity));
    }
    if (!text.empty()) std::memcpy(buf, text.data(), text.size());
    return ENGINE_OK;
  });
}

engine_session_params engine_session_default_params(void) {
  return engine_session_params{0, 512, ENGINE_KV_F16, 0, nullptr};
}

engine_status engine_session_create(engine_model* m, const engine_session_params* params, engine_session** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: out is null");
  *out = nullptr;
  ModelClaim model(m);  // held until the session counts as one of the model's
  if (model.status() != Status::ok) return refused(model.status(), "engine_session_create", "model");
  const engine_session_params p = params != nullptr ? *params : engine_session_default_params();
  if (p.kv_type < ENGINE_KV_F16 || p.kv_type > ENGINE_KV_Q4_0) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: unknown kv_type");
  }
  if (p.n_threads < 0) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_create: n_threads < 0");
  return guarded("engine_session_create", [&] {
    auto s = std::make_unique<SessionObject>();
    engine::ThreadOptions threads;
    threads.n_threads = static_cast<size_t>(p.n_threads);
    if (p.cpus != nullptr) threads.set_cpus(p.cpus);
    const engine::ThreadPlan plan = engine::ThreadPlan::make(engine::CpuTopology::detect(), threads);
    s->pool = std::make_unique<engine::ThreadPool>(plan);
    engine::SessionParams sp;
    sp.n_ctx = p.n_ctx;
    sp.n_batch = p.n_batch != 0 ? p.n_batch : 512;
    sp.kv_type = static_cast<engine::KvType>(p.kv_type);
    sp.pool = s->pool.get();
    s->session = std::make_unique<engine::Session>(*model->model, sp);
    s->owner = &*model;
    const uintptr_t id = handle_table().add(Kind::session, s.get());
    model->sessions.fetch_add(1);
    *out = handle_of<engine_session>(id);
    s.release();
    return ENGINE_OK;
  });
}

engine_status engine_session_free(engine_session* session) {
  void* object = nullptr;
  const Status s = handle_table().remove(id_of(session), Kind::session, &object, [](void*) { return true; });
  if (s != Status::ok) return refused(s, "engine_session_free", "session");
  auto* o = static_cast<SessionObject*>(object);
  ModelObject* owner = o->owner;
  delete o;  // first: until the count drops, the model cannot be freed under the session
  owner->sessions.fetch_sub(1);
  return ENGINE_OK;
}

engine_status engine_prefill(engine_session* session, const int32_t* tokens, size_t n) {
  return evaluate("engine_prefill", session, tokens, n);
}

engine_status engine_decode(engine_session* session, int32_t token) {
  return evaluate("engine_decode", session, &token, 1);
}

engine_status engine_logits(engine_session* session, const float** logits, size_t* n_vocab) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_logits", "session");
  if (logits == nullptr || n_vocab == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_logits: null output");
  if (!s->has_logits()) {
    return fail(ENGINE_ERR_STATE, "engine_logits: no logits (nothing evaluated since the session was created or "
                                  "reset, or the last evaluation failed)");
  }
  *logits = s->session->logits().data();
  *n_vocab = s->session->logits().size();
  return ENGINE_OK;
}

uint32_t engine_session_n_past(const engine_session* session) {
  uint32_t n = 0;
  handle_table().peek(id_of(session), Kind::session,
                      [&](void* o) { n = static_cast<const SessionObject*>(o)->n_past.load(); });
  return n;
}

engine_status engine_session_kv_info(const engine_session* session, engine_kv_info* out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_kv_info: out is null");
  // The cache's size is fixed at creation: read under the table's lock, no call slot.
  const bool live = handle_table().peek(id_of(session), Kind::session, [&](void* o) {
    const engine::KvCache& kv = static_cast<const SessionObject*>(o)->session->kv_cache();
    const engine::KvSize& size = kv.size();
    *out = engine_kv_info{size.bytes,
                          size.full_bytes,
                          kv.n_ctx(),
                          size.n_layers,
                          size.n_windowed,
                          size.windows.empty() ? 0 : size.windows.back(),
                          static_cast<engine_kv_type>(kv.type())};
  });
  if (!live) return refused(Status::invalid, "engine_session_kv_info", "session");
  return ENGINE_OK;
}

engine_status engine_session_reset(engine_session* session) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_session_reset", "session");
  s->session->reset();
  s->published();
  return ENGINE_OK;
}

engine_status engine_session_workers(engine_session* session, engine_worker_info* out, size_t capacity, size_t* n) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_session_workers", "session");
  if (n == nullptr || (out == nullptr && capacity > 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_session_workers: n or out is null");
  }
  const std::vector<engine::WorkerReport> report = s->pool->report();
  *n = report.size();
  for (size_t i = 0; i < report.size() && i < capacity; ++i) {
    const engine::WorkerReport& r = report[i];
    out[i] = engine_worker_info{static_cast<int32_t>(r.thread), r.cpu_asked,
                                r.pin == engine::WorkerReport::Pin::pinned   ? ENGINE_PIN_PINNED
                                : r.pin == engine::WorkerReport::Pin::failed ? ENGINE_PIN_FAILED
                                                                             : ENGINE_PIN_NOT_PINNED,
                                r.pin_error, r.last_cpu};
  }
  if (report.size() > capacity) {
    return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_session_workers: the session has " +
                                                 std::to_string(report.size()) + " threads, room for " +
                                                 std::to_string(capacity));
  }
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
    auto s = std::make_unique<SamplerObject>();
    s->sampler = std::make_unique<engine::Sampler>(sp);
    *out = handle_of<engine_sampler>(handle_table().add(Kind::sampler, s.get()));
    s.release();
    return ENGINE_OK;
  });
}

engine_status engine_sampler_free(engine_sampler* sampler) {
  void* object = nullptr;
  const Status s = handle_table().remove(id_of(sampler), Kind::sampler, &object, [](void*) { return true; });
  if (s != Status::ok) return refused(s, "engine_sampler_free", "sampler");
  delete static_cast<SamplerObject*>(object);
  return ENGINE_OK;
}

engine_status engine_sample(engine_sampler* sampler_handle, engine_session* session, int32_t* token) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_sample (sampler)", "sampler");
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_sample (session)", "session");
  if (token == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_sample: token is null");
  const size_t n_vocab = s->owner->model->config().n_vocab;
  const auto logits = s->session->logits();
  if (!s->has_logits() || logits.size() < n_vocab) {
    return fail(ENGINE_ERR_STATE, "engine_sample: no logits (call engine_prefill or engine_decode first)");
  }
  return guarded("engine_sample", [&] {
    *token = sampler->sampler->sample(logits.subspan(logits.size() - n_vocab));
    sampler->sampler->accept(*token);
    return ENGINE_OK;
  });
}

engine_status engine_sampler_accept(engine_sampler* sampler_handle, int32_t token) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_sampler_accept", "sampler");
  return guarded("engine_sampler_accept", [&] {
    sampler->sampler->accept(token);
    return ENGINE_OK;
  });
}

}  // extern "C"
