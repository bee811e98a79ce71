// A thin C++ wrapper over the C API (engine.h): RAII handles, exceptions
// instead of status codes, std::span and std::string instead of pointers and
// sizes. Same threading rules as the C API.
#pragma once

#include <exception>
#include <functional>
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

// ---- chat (engine.h, "chat") ----
// Message and ToolCall have the shape of engine::chat's, kept apart: the
// wrapper depends on engine.h alone, so an app calls only the C functions.
struct ToolCall {
  std::string id;         // "" for none
  std::string name;
  std::string arguments;  // a JSON object's text
};
struct Message {
  std::string role;  // "system", "user", "assistant", "tool", ...
  std::string content;
  std::vector<ToolCall> tool_calls;  // an assistant's calls
  std::string tool_call_id;          // a tool result: the call it answers ("" for none)
  std::string name;                  // a tool result: the tool's name ("" for none)
};
struct ChatOptions {
  std::string template_name;  // "": the model's template (ChatML when it has none); or a built-in's name
  std::string template_text;  // "": none; or a Jinja template of the app's own
  bool add_generation_prompt = true;
  std::string tools;      // "" or a JSON array of tool schemas
  std::string variables;  // "" or a JSON object of further template variables
};
// What a chat turn's prefill did: the prompt's tokens and those reused.
struct ChatPrompt {
  size_t n_prompt = 0, n_reused = 0;
};
// Receives each token of the reply with its log-probability and the most
// likely tokens at that step (engine_chat_token_callback).
using TokenCallback = std::function<void(const engine_token_logprob& token, std::span<const engine_token_logprob> top)>;
struct GenerateOptions {
  uint32_t max_tokens = 0;  // 0: until the context is full
  std::vector<std::string> stop;
  TokenCallback on_token;       // empty: none (no log-probabilities computed)
  uint32_t n_top_logprobs = 0;  // at most 20
};
struct Reply {
  std::string text;  // what was streamed: the reply without the stop string
  uint32_t n_tokens = 0;
  engine_chat_stop_reason reason = ENGINE_CHAT_END_OF_GENERATION;
};
// Receives each piece of the reply (whole UTF-8 characters); false stops it.
using TextCallback = std::function<bool(std::string_view)>;

// The C API's buffer-filling calls return ENGINE_ERR_BUFFER_TOO_SMALL with
// the size they need; fill(data, capacity, &size) runs once more with `out`
// grown to it (plus `extra`, for a call that also writes a NUL). On success
// `out` keeps the size written. The bindings use it too.
template <class Buffer, class Fill>
engine_status fill_buffer(Buffer& out, Fill fill, size_t extra = 0) {
  size_t n = 0;
  engine_status s = fill(out.data(), out.size(), &n);
  if (s == ENGINE_ERR_BUFFER_TOO_SMALL) {
    out.resize(n + extra);
    s = fill(out.data(), out.size(), &n);
  }
  if (s == ENGINE_OK) out.resize(n);
  return s;
}

namespace detail {
// Messages as the C API takes them, pointing into `messages` (which must outlive it).
class CMessages {
 public:
  explicit CMessages(const std::vector<Message>& messages) : calls_(messages.size()) {
    for (size_t i = 0; i < messages.size(); ++i) {
      const Message& m = messages[i];
      for (const ToolCall& c : m.tool_calls) calls_[i].push_back({c.id.c_str(), c.name.c_str(), c.arguments.c_str()});
      c_.push_back({m.role.c_str(), m.content.c_str(), calls_[i].data(), calls_[i].size(), m.tool_call_id.c_str(),
                    m.name.c_str()});
    }
  }
  const engine_chat_message* data() const { return c_.data(); }
  size_t size() const { return c_.size(); }

 private:
  std::vector<std::vector<engine_chat_tool_call>> calls_;
  std::vector<engine_chat_message> c_;
};
inline const char* or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }
inline engine_chat_params c_params(const ChatOptions& o) {
  return engine_chat_params{or_null(o.template_name), or_null(o.template_text), o.add_generation_prompt,
                            or_null(o.tools), or_null(o.variables)};
}
template <class Buffer, class Fill>
Buffer filled(Buffer out, Fill fill, size_t extra = 0) {
  check(engine::api::fill_buffer(out, fill, extra));
  return out;
}
}  // namespace detail

// The built-in chat templates' names.
inline std::vector<std::string> builtin_chat_templates() {
  size_t n = 0;
  check(engine_chat_builtin_templates(nullptr, 0, &n));
  std::vector<const char*> names(n);
  check(engine_chat_builtin_templates(names.data(), names.size(), &n));
  return {names.begin(), names.end()};
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
  // With progress, cancellation (an Error of status ENGINE_ERR_CANCELLED) and
  // the repack cache: engine_model_load_ex.
  Model(const std::string& path, const engine_load_options& options) {
    engine_model* m = nullptr;
    check(engine_model_load_ex(path.c_str(), &options, &m));
    h_ = Owned<engine_model, engine_model_free>(m);
  }
  engine_load_stats load_stats() const {
    engine_load_stats s{};
    check(engine_model_load_stats(get(), &s));
    return s;
  }
  engine_model* get() const { return h_.get(); }
  int32_t n_vocab() const { return engine_model_n_vocab(get()); }
  int32_t bos() const { return engine_model_bos(get()); }
  int32_t eos() const { return engine_model_eos(get()); }
  bool add_bos() const { return engine_model_add_bos(get()); }
  bool is_end_of_generation(int32_t t) const { return engine_model_is_end_of_generation(get(), t); }

  std::vector<int32_t> tokenize(std::string_view text, bool add_bos, bool parse_special = false) const {
    return detail::filled(std::vector<int32_t>(text.size() + 2), [&](int32_t* ids, size_t cap, size_t* n) {
      return engine_tokenize(get(), text.data(), text.size(), add_bos, parse_special, ids, cap, n);
    });
  }
  std::string piece(int32_t token) const {
    return detail::filled(std::string(16, '\0'), [&](char* out, size_t cap, size_t* n) {
      return engine_token_to_piece(get(), token, out, cap, n);
    });
  }
  // The text of a token sequence (engine_detokenize).
  std::string detokenize(const std::vector<int32_t>& tokens) const {
    return detail::filled(std::string(4 * tokens.size() + 16, '\0'), [&](char* out, size_t cap, size_t* n) {
      return engine_detokenize(get(), tokens.data(), tokens.size(), out, cap, n);
    });
  }
  // The prompt of a conversation (engine_chat_render). A template's error
  // throws Error with ENGINE_ERR_TEMPLATE and its message.
  std::string render_chat(const std::vector<Message>& messages, const ChatOptions& options = {}) const {
    const detail::CMessages c(messages);
    const engine_chat_params p = detail::c_params(options);
    return detail::filled(
        std::string(256, '\0'),
        [&](char* out, size_t cap, size_t* n) { return engine_chat_render(get(), c.data(), c.size(), &p, out, cap, n); },
        1);
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
  // A chat turn's prompt, evaluating only what the session does not hold yet
  // (engine_chat_prefill).
  ChatPrompt prefill_chat(const std::vector<Message>& messages, const ChatOptions& options = {}) {
    const detail::CMessages c(messages);
    const engine_chat_params p = detail::c_params(options);
    ChatPrompt out;
    check(engine_chat_prefill(get(), c.data(), c.size(), &p, &out.n_prompt, &out.n_reused));
    return out;
  }
  // Keeps the first n tokens (engine_session_truncate).
  void truncate(uint32_t n) { check(engine_session_truncate(get(), n)); }
  std::vector<int32_t> tokens() const {
    return detail::filled(std::vector<int32_t>(n_past()), [&](int32_t* out, size_t cap, size_t* n) {
      return engine_session_tokens(get(), out, cap, n);
    });
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
  // The state memory by kind: attention cache, recurrent states, checkpoints
  // (engine_session_memory_info).
  engine_memory_info memory_info() {
    engine_memory_info info{};
    check(engine_session_memory_info(get(), &info));
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
  // Constrains sampling to a GBNF grammar over model's vocabulary
  // (engine_sampler_set_grammar); a grammar that does not parse throws Error
  // naming the line and column.
  void set_grammar(const Model& model, const std::string& gbnf, const std::string& root = "root") {
    check(engine_sampler_set_grammar(h_.get(), model.get(), gbnf.c_str(), root.c_str()));
  }
  // The same with a JSON Schema (engine_sampler_set_json_schema).
  void set_json_schema(const Model& model, const std::string& schema) {
    check(engine_sampler_set_json_schema(h_.get(), model.get(), schema.c_str()));
  }
  // A reply that must call one of the tools (engine_sampler_set_tool_grammar);
  // format "": the model's template's.
  void set_tool_grammar(const Model& model, const std::string& tools, const std::string& format = "") {
    check(engine_sampler_set_tool_grammar(h_.get(), model.get(), tools.c_str(), format.empty() ? nullptr : format.c_str()));
  }
  void clear_grammar() { check(engine_sampler_set_grammar(h_.get(), nullptr, nullptr, nullptr)); }
  void reset_grammar() { check(engine_sampler_reset_grammar(h_.get())); }
  engine_sampler* get() const { return h_.get(); }

 private:
  Owned<engine_sampler, engine_sampler_free> h_;
};

// A reply read back into its tool calls (engine_chat_parse_tool_calls), in
// the model's template's format or the one named ("hermes", "llama3", ...).
struct ParsedReply {
  std::string content;
  std::vector<ToolCall> tool_calls;
  std::string format;  // the format read
};
inline ParsedReply parse_tool_calls(const Model& model, const std::string& reply, const std::string& format = "") {
  engine_chat_parsed* p = nullptr;
  check(engine_chat_parse_tool_calls(model.get(), format.empty() ? nullptr : format.c_str(), reply.c_str(), &p));
  ParsedReply out{p->content, {}, p->format};
  for (size_t i = 0; i < p->n_tool_calls; ++i) {
    const engine_chat_tool_call& c = p->tool_calls[i];
    out.tool_calls.push_back({c.id != nullptr ? c.id : "", c.name, c.arguments});
  }
  engine_chat_parsed_free(p);
  return out;
}

// Generates a reply after a prefill (engine_chat_generate), streaming its
// pieces to on_text. An exception thrown by on_text stops the reply and is
// rethrown here; an engine error throws Error.
inline Reply generate(Session& session, Sampler& sampler, const GenerateOptions& options = {},
                      const TextCallback& on_text = {}) {
  struct State {
    const TextCallback* on_text;
    const TokenCallback* on_token;
    Reply reply;
    std::exception_ptr error;
  } state{&on_text, &options.on_token, {}, nullptr};
  std::vector<const char*> stops;
  for (const std::string& s : options.stop) stops.push_back(s.c_str());
  engine_chat_generate_params p = engine_chat_default_generate_params();
  p.max_tokens = options.max_tokens;
  p.stop = stops.data();
  p.n_stop = stops.size();
  p.user_data = &state;
  p.on_text = [](const char* text, size_t len, void* user) {
    auto* st = static_cast<State*>(user);
    if (st->error) return false;  // on_token threw
    try {
      st->reply.text.append(text, len);
      return !*st->on_text || (*st->on_text)(std::string_view(text, len));
    } catch (...) {
      st->error = std::current_exception();  // never across the C API
      return false;
    }
  };
  if (options.on_token) {
    p.n_top_logprobs = options.n_top_logprobs;
    p.on_token = [](const engine_token_logprob* token, const engine_token_logprob* top, size_t n_top, void* user) {
      auto* st = static_cast<State*>(user);
      if (st->error) return;
      try {
        (*st->on_token)(*token, std::span<const engine_token_logprob>(top, n_top));
      } catch (...) {
        st->error = std::current_exception();  // rethrown once the reply stops at the next text
      }
    };
  }
  engine_chat_result result{};
  const engine_status s = engine_chat_generate(session.get(), sampler.get(), &p, &result);
  if (state.error) std::rethrow_exception(state.error);
  check(s);
  state.reply.n_tokens = result.n_tokens;
  state.reply.reason = result.reason;
  return std::move(state.reply);
}

// A multi-turn chat on one session: the conversation so far, each turn
// prefilling only what the session does not hold (the previous turns stay in
// its cache) and adding the reply to the conversation.
class Chat {
 public:
  Chat(Session& session, Sampler& sampler, ChatOptions options = {}, std::string system_prompt = {})
      : session_(session), sampler_(sampler), options_(std::move(options)) {
    if (!system_prompt.empty()) messages_.push_back({"system", std::move(system_prompt), {}, {}, {}});
  }
  // The user's message in, the assistant's reply out (streamed to on_text).
  Reply say(std::string user_text, const GenerateOptions& generate_options = {}, const TextCallback& on_text = {}) {
    messages_.push_back({"user", std::move(user_text), {}, {}, {}});
    return respond(generate_options, on_text);
  }
  // A reply to the conversation as it stands (e.g. after a tool result was added).
  Reply respond(const GenerateOptions& generate_options = {}, const TextCallback& on_text = {}) {
    last_prompt_ = session_.prefill_chat(messages_, options_);
    Reply reply = generate(session_, sampler_, generate_options, on_text);
    messages_.push_back({"assistant", reply.text, {}, {}, {}});
    return reply;
  }
  std::vector<Message>& messages() { return messages_; }
  // The last turn's prefill: prompt tokens and those reused from the session.
  const ChatPrompt& last_prompt() const { return last_prompt_; }

 private:
  Session& session_;
  Sampler& sampler_;
  ChatOptions options_;
  std::vector<Message> messages_;
  ChatPrompt last_prompt_;
};

}  // namespace engine::api
