// A thin C++ wrapper over the C API (engine.h): RAII handles, exceptions
// instead of status codes, std::span and std::string instead of pointers and
// sizes. Same threading rules as the C API.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/api/engine.h"

namespace engine::api {

class Error : public std::runtime_error {
 public:
  Error(engine_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  engine_status status() const { return status_; }

 private:
  engine_status status_;
};

inline void check(engine_status s) {
  if (s != ENGINE_OK) throw Error(s, engine_last_error());
}

// The engine's log (engine.h): messages below `level` are dropped; a callback
// receives them instead of stderr (nullptr restores stderr). Thread-safe.
inline void set_log_level(engine_log_level level) { check(engine_set_log_level(level)); }
inline void set_log_callback(engine_log_callback callback, void* user = nullptr) {
  check(engine_set_log_callback(callback, user));
}

template <class Handle, engine_status (*Free)(Handle*)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle* h) : h_(h) {}
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Owned() { reset(); }
  Handle* get() const { return h_; }

 private:
  void reset() {
    if (h_ != nullptr) Free(h_);
    h_ = nullptr;
  }
  Handle* h_ = nullptr;
};

class Model {
 public:
  explicit Model(const std::string& path) {
    engine_model* m = nullptr;
    check(engine_model_load(path.c_str(), &m));
    h_ = Owned<engine_model, engine_model_free>(m);
  }
  engine_model* get() const { return h_.get(); }
  int32_t n_vocab() const { return engine_model_n_vocab(get()); }
  int32_t bos() const { return engine_model_bos(get()); }
  int32_t eos() const { return engine_model_eos(get()); }
  bool is_end_of_generation(int32_t t) const { return engine_model_is_end_of_generation(get(), t); }

  std::vector<int32_t> tokenize(std::string_view text, bool add_bos, bool parse_special = false) const {
    std::vector<int32_t> ids(text.size() + 2);
    size_t n = 0;
    engine_status s = engine_tokenize(get(), text.data(), text.size(), add_bos, parse_special, ids.data(), ids.size(), &n);
    if (s == ENGINE_ERR_BUFFER_TOO_SMALL) {
      ids.resize(n);
      s = engine_tokenize(get(), text.data(), text.size(), add_bos, parse_special, ids.data(), ids.size(), &n);
    }
    check(s);
    ids.resize(n);
    return ids;
  }
  std::string piece(int32_t token) const {
    std::string out(16, '\0');
    size_t n = 0;
    engine_status s = engine_token_to_piece(get(), token, out.data(), out.size(), &n);
    if (s == ENGINE_ERR_BUFFER_TOO_SMALL) {
      out.resize(n);
      s = engine_token_to_piece(get(), token, out.data(), out.size(), &n);
    }
    check(s);
    out.resize(n);
    return out;
  }

 private:
  Owned<engine_model, engine_model_free> h_;
};

class Session {
 public:
  explicit Session(const Model& model, engine_session_params params = engine_session_default_params()) {
    engine_session* s = nullptr;
    check(engine_session_create(model.get(), &params, &s));
    h_ = Owned<engine_session, engine_session_free>(s);
  }
  engine_session* get() const { return h_.get(); }
  void prefill(std::span<const int32_t> tokens) { check(engine_prefill(get(), tokens.data(), tokens.size())); }
  void decode(int32_t token) { check(engine_decode(get(), token)); }
  std::span<const float> logits() const {
    const float* p = nullptr;
    size_t n = 0;
    check(engine_logits(get(), &p, &n));
    return {p, n};
  }
  uint32_t n_past() const { return engine_session_n_past(get()); }
  void reset() { check(engine_session_reset(get())); }

  // The whole prompt, reusing the session's tokens it begins with; returns
  // how many were reused (engine_prefill_prompt).
  size_t prefill_prompt(std::span<const int32_t> tokens) {
    size_t reused = 0;
    check(engine_prefill_prompt(get(), tokens.data(), tokens.size(), &reused));
    return reused;
  }
  // Keeps the first n tokens (engine_session_truncate).
  void truncate(uint32_t n) { check(engine_session_truncate(get(), n)); }
  std::vector<int32_t> tokens() const {
    std::vector<int32_t> out(n_past());
    size_t n = 0;
    engine_status s = engine_session_tokens(get(), out.data(), out.size(), &n);
    if (s == ENGINE_ERR_BUFFER_TOO_SMALL) {
      out.resize(n);
      s = engine_session_tokens(get(), out.data(), out.size(), &n);
    }
    check(s);
    out.resize(n);
    return out;
  }
  uint64_t n_evaluated() const { return engine_session_n_evaluated(get()); }
  // Saved sessions (engine_session_save / engine_session_load).
  void save(const std::string& path) { check(engine_session_save(get(), path.c_str())); }
  void load(const std::string& path) { check(engine_session_load(get(), path.c_str())); }
  // callback(user_data) before every layer; true stops the evaluation, which
  // then throws Error with status ENGINE_ERR_ABORTED (engine_session_set_abort).
  void set_abort(engine_abort_callback callback, void* user_data) {
    check(engine_session_set_abort(get(), callback, user_data));
  }
  // The KV cache's bytes, and a full cache's (engine_session_kv_info).
  engine_kv_info kv_info() const {
    engine_kv_info info{};
    check(engine_session_kv_info(get(), &info));
    return info;
  }

 private:
  Owned<engine_session, engine_session_free> h_;
};

class Sampler {
 public:
  explicit Sampler(engine_sampler_params params = engine_sampler_default_params()) {
    engine_sampler* s = nullptr;
    check(engine_sampler_create(&params, &s));
    h_ = Owned<engine_sampler, engine_sampler_free>(s);
  }
  int32_t sample(Session& session) {
    int32_t t = -1;
    check(engine_sample(h_.get(), session.get(), &t));
    return t;
  }
  void accept(int32_t token) { check(engine_sampler_accept(h_.get(), token)); }

 private:
  Owned<engine_sampler, engine_sampler_free> h_;
};

}  // namespace engine::api
