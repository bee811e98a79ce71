// The C API's objects behind the handles, and the steps every entry point
// shares (claiming a handle, mapping exceptions to statuses), for the source
// files of the C API: c_api.cpp (models, tokens, sessions, sampling) and
// c_api_session.cpp (a session's tokens, saved sessions, cancellation).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "engine/api/engine.h"
#include "engine/api/handle_table.h"
#include "engine/api/last_error.h"
#include "engine/chat/tool_calls.h"
#include "engine/grammar/token_constraint.h"
#include "engine/model/model.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/session.h"
#include "engine/support/error.h"
#include "engine/threads/thread_pool.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"

namespace engine::api_detail {

struct ModelObject {
  std::unique_ptr<engine::Model> model;
  engine::Tokenizer tokenizer;
  std::atomic<int> sessions{0};  // a model with sessions cannot be freed

  // The vocabulary as grammars see it (engine_sampler_set_grammar), built on
  // first use and shared by every grammar on this model's tokens.
  std::shared_ptr<const engine::grammar::TokenVocabulary> grammar_vocabulary() {
    std::lock_guard<std::mutex> lock(grammar_mutex);
    if (!grammar_vocab) grammar_vocab = std::make_shared<engine::grammar::TokenVocabulary>(tokenizer);
    return grammar_vocab;
  }
  std::mutex grammar_mutex;
  std::shared_ptr<const engine::grammar::TokenVocabulary> grammar_vocab;
};

struct SessionObject {
  ModelObject* owner = nullptr;  // outlives the session: see ModelObject::sessions
  std::unique_ptr<engine::ThreadPool> pool;
  std::unique_ptr<engine::Session> session;  // destroyed before the pool it uses
  // Readable while another thread evaluates: copies of the session's counts,
  // updated after every call that changes them.
  std::atomic<uint32_t> n_past{0};
  std::atomic<uint64_t> n_evaluated{0};
  bool has_logits() const { return !session->logits().empty(); }
  void published() {
    n_past.store(static_cast<uint32_t>(session->tokens().size()));
    n_evaluated.store(session->n_evaluated());
  }
};

struct SamplerObject {
  std::unique_ptr<engine::Sampler> sampler;
};

// The tool-call format named (engine::Error for an unknown name), or (NULL)
// the one the model's chat template shows (c_api_chat.cpp).
engine::chat::ToolCallFormat model_tool_call_format(const ModelObject& model, const char* format);

using ModelClaim = Claim<ModelObject, Kind::model, Access::shared>;
using SessionClaim = Claim<SessionObject, Kind::session, Access::exclusive>;
using SamplerClaim = Claim<SamplerObject, Kind::sampler, Access::exclusive>;

template <class Handle>
uintptr_t id_of(const Handle* h) {
  return reinterpret_cast<uintptr_t>(h);
}
template <class Handle>
Handle* handle_of(uintptr_t id) {
  return reinterpret_cast<Handle*>(id);
}


// The status of a claim or removal that did not succeed.
inline engine_status refused(Status s, const std::string& what, const char* noun) {
  switch (s) {
    case Status::ok:
      break;
    case Status::invalid:
      return fail(ENGINE_ERR_INVALID_HANDLE, what + ": invalid, freed or null handle");
    case Status::busy:
      return fail(ENGINE_ERR_BUSY, what + ": the " + noun + " is in use by another thread");
    case Status::refused:
      return fail(ENGINE_ERR_IN_USE, what + ": the " + noun + " is still in use");
  }
  return fail(ENGINE_ERR_INTERNAL, what + ": unexpected handle status");
}

// Runs fn, mapping exceptions to statuses.
template <class Fn>
engine_status guarded(const char* what, Fn&& fn) {
  try {
    engine::api_detail::clear_last_error();
    return fn();
  } catch (const gguf::Error& e) {
    return fail(ENGINE_ERR_MODEL, e.what());
  } catch (const engine::ModelError& e) {
    return fail(ENGINE_ERR_MODEL, e.what());
  } catch (const engine::ResourceError& e) {
    return fail(ENGINE_ERR_OUT_OF_MEMORY, std::string(what) + ": " + e.what());
  } catch (const engine::Cancelled& e) {
    return fail(ENGINE_ERR_CANCELLED, std::string(what) + ": " + e.what());
  } catch (const engine::Aborted& e) {
    return fail(ENGINE_ERR_ABORTED, std::string(what) + ": " + e.what());
  } catch (const engine::SessionFileError& e) {
    return fail(ENGINE_ERR_FILE, std::string(what) + ": " + e.what());
  } catch (const engine::Error& e) {
    const std::string msg = e.what();
    return fail(msg.rfind("context full", 0) == 0 ? ENGINE_ERR_CONTEXT_FULL : ENGINE_ERR_INVALID_ARGUMENT,
                std::string(what) + ": " + msg);
  } catch (const std::bad_alloc&) {
    return fail(ENGINE_ERR_OUT_OF_MEMORY, std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ENGINE_ERR_INTERNAL, std::string(what) + ": " + e.what());
  } catch (...) {
    return fail(ENGINE_ERR_INTERNAL, std::string(what) + ": unknown error");
  }
}

// Model properties are immutable: read under the table's lock, no call slot.
template <class R, class Fn>
R model_property(const engine_model* m, R bad, Fn&& fn) {
  R result = bad;
  handle_table().peek(id_of(m), Kind::model, [&](void* o) { result = fn(*static_cast<const ModelObject*>(o)); });
  return result;
}

// A call on a claimed session that may change its state: fn(session) under
// guarded, and the counts published whatever the outcome (an aborted prefill
// keeps its whole batches). `what` is the C function, named in every message
// (a decode on a freed session once blamed engine_prefill).
template <class Fn>
engine_status on_session(const char* what, engine_session* session, Fn&& fn) {
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), what, "session");
  const engine_status status = guarded(what, [&] { return fn(*s->session); });
  s->published();
  return status;
}

// engine_prefill and engine_decode. A failed evaluation leaves no logits (the
// session cleared them).
inline engine_status evaluate(const char* what, engine_session* session, const int32_t* tokens, size_t n) {
  if (tokens == nullptr || n == 0) {
    if (SessionClaim s(session); s.status() != Status::ok) return refused(s.status(), what, "session");
    return fail(ENGINE_ERR_INVALID_ARGUMENT, std::string(what) + ": no tokens");
  }
  return on_session(what, session, [&](engine::Session& s) {
    s.eval({tokens, n});
    return ENGINE_OK;
  });
}

}  // namespace engine::api_detail
