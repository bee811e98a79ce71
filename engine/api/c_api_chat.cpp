// The C API's chat functions (engine.h, "chat"): C messages to
// engine::chat::Message, and the turn of engine/chat/turn.h on a claimed
// session. Template errors (engine::chat_template::Error) are
// ENGINE_ERR_TEMPLATE with the template's own message.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/api/c_api_objects.h"
#include "engine/api/engine.h"
#include "engine/chat/builtin_templates.h"
#include "engine/chat/tool_calls.h"
#include "engine/chat/turn.h"
#include "engine/chat_template/error.h"

using namespace engine::api_detail;  // NOLINT: the objects and steps of c_api_objects.h

namespace {

constexpr uint32_t kMaxTopLogprobs = 20;  // OpenAI's bound for top_logprobs

std::string str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

std::vector<engine::chat::Message> to_messages(const engine_chat_message* messages, size_t n) {
  if (messages == nullptr && n != 0) throw engine::Error("messages is null");
  std::vector<engine::chat::Message> out(n);
  for (size_t i = 0; i < n; ++i) {
    const engine_chat_message& m = messages[i];
    if (m.role == nullptr) throw engine::Error("message " + std::to_string(i) + " has no role");
    if (m.tool_calls == nullptr && m.n_tool_calls != 0) {
      throw engine::Error("message " + std::to_string(i) + ": tool_calls is null");
    }
    out[i] = {str(m.role), str(m.content), {}, str(m.tool_call_id), str(m.name)};
    for (size_t c = 0; c < m.n_tool_calls; ++c) {
      const engine_chat_tool_call& t = m.tool_calls[c];
      out[i].tool_calls.push_back({str(t.id), str(t.name), str(t.arguments)});
    }
  }
  return out;
}

std::string render(const ModelObject& model, const engine_chat_message* messages, size_t n,
                   const engine_chat_params* params) {
  const engine_chat_params p = params != nullptr ? *params : engine_chat_default_params();
  engine::chat::RenderOptions options;
  options.add_generation_prompt = p.add_generation_prompt;
  options.tools = str(p.tools);
  options.variables = str(p.variables);
  return engine::chat::render_prompt(model.model->file(), model.tokenizer, to_messages(messages, n),
                                     str(p.template_name), str(p.template_text), options);
}

// guarded() for the chat calls: a template's errors are ENGINE_ERR_TEMPLATE;
// the rest as every entry point maps them (engine::Error for what the caller
// passed, messages, options and stop strings, is ENGINE_ERR_INVALID_ARGUMENT).
template <class Fn>
engine_status chat_guarded(const char* what, Fn&& fn) {
  return guarded(what, [&] {
    try {
      return fn();
    } catch (const engine::chat_template::Error& e) {
      return fail(ENGINE_ERR_TEMPLATE, std::string(what) + ": " + e.what());
    }
  });
}

engine_chat_stop_reason to_c(engine::chat::StopReason r) {
  switch (r) {
    case engine::chat::StopReason::end_of_generation: return ENGINE_CHAT_END_OF_GENERATION;
    case engine::chat::StopReason::stop_string: return ENGINE_CHAT_STOP_STRING;
    case engine::chat::StopReason::max_tokens: return ENGINE_CHAT_MAX_TOKENS;
    case engine::chat::StopReason::callback: return ENGINE_CHAT_CALLBACK;
    case engine::chat::StopReason::context_full: return ENGINE_CHAT_CONTEXT_FULL;
  }
  return ENGINE_CHAT_END_OF_GENERATION;
}

}  // namespace

namespace engine::api_detail {

engine::chat::ToolCallFormat model_tool_call_format(const ModelObject& model, const char* format) {
  if (format != nullptr) return engine::chat::tool_call_format_named(format);
  return engine::chat::tool_call_format(engine::chat::template_source(model.model->file(), "", ""));
}

}  // namespace engine::api_detail

namespace {

// What engine_chat_parse_tool_calls hands out: the C view and the strings it
// points into (engine_chat_parsed::internal points back here).
struct ParsedObject {
  engine_chat_parsed view{};
  engine::chat::ParsedReply reply;
  std::vector<engine_chat_tool_call> calls;
};

}  // namespace

extern "C" {

engine_chat_params engine_chat_default_params(void) { return engine_chat_params{nullptr, nullptr, true, nullptr, nullptr}; }

engine_status engine_chat_builtin_templates(const char** names, size_t capacity, size_t* n) {
  if (n == nullptr || (names == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_builtin_templates: null names or n");
  }
  const auto& all = engine::chat::builtin_template_names();
  *n = all.size();
  for (size_t i = 0; i < all.size() && i < capacity; ++i) names[i] = all[i].data();  // literals: NUL-terminated
  return ENGINE_OK;
}

engine_status engine_chat_render(const engine_model* m, const engine_chat_message* messages, size_t n,
                                 const engine_chat_params* params, char* buf, size_t capacity, size_t* len) {
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_chat_render", "model");
  if (len == nullptr || (buf == nullptr && capacity != 0)) {
    return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_render: null buf or len");
  }
  return chat_guarded("engine_chat_render", [&] {
    const std::string prompt = render(*model, messages, n, params);
    *len = prompt.size();
    if (prompt.size() + 1 > capacity) {
      return fail(ENGINE_ERR_BUFFER_TOO_SMALL, "engine_chat_render: the prompt has " + std::to_string(prompt.size()) +
                                                   " bytes (and a NUL), the buffer " + std::to_string(capacity));
    }
    prompt.copy(buf, prompt.size());
    buf[prompt.size()] = '\0';
    return ENGINE_OK;
  });
}

engine_status engine_chat_prefill(engine_session* session, const engine_chat_message* messages, size_t n,
                                  const engine_chat_params* params, size_t* n_prompt, size_t* n_reused) {
  if (n_prompt != nullptr) *n_prompt = 0;
  if (n_reused != nullptr) *n_reused = 0;
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_chat_prefill", "session");
  const engine_status status = chat_guarded("engine_chat_prefill", [&] {
    const ModelObject& model = *s->owner;
    const std::vector<int32_t> tokens = engine::chat::prompt_tokens(model.tokenizer, render(model, messages, n, params));
    if (tokens.empty()) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_prefill: the prompt is empty");
    if (n_prompt != nullptr) *n_prompt = tokens.size();
    const uint32_t reused = s->session->eval_prompt(tokens);
    if (n_reused != nullptr) *n_reused = reused;
    return ENGINE_OK;
  });
  s->published();
  return status;
}

engine_chat_generate_params engine_chat_default_generate_params(void) {
  return engine_chat_generate_params{0, nullptr, 0, nullptr, nullptr, nullptr, 0};
}

engine_status engine_chat_generate(engine_session* session, engine_sampler* sampler_handle,
                                   const engine_chat_generate_params* params, engine_chat_result* result) {
  if (result != nullptr) *result = engine_chat_result{0, ENGINE_CHAT_END_OF_GENERATION};
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_chat_generate (sampler)", "sampler");
  SessionClaim s(session);
  if (s.status() != Status::ok) return refused(s.status(), "engine_chat_generate (session)", "session");
  const engine_chat_generate_params p = params != nullptr ? *params : engine_chat_default_generate_params();
  if (p.stop == nullptr && p.n_stop != 0) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_generate: stop is null");
  engine::chat::GenerateResult out;
  const engine_status status = chat_guarded("engine_chat_generate", [&] {
    if (!s->has_logits()) {
      return fail(ENGINE_ERR_STATE, "engine_chat_generate: no logits (call engine_chat_prefill first)");
    }
    engine::chat::GenerateOptions options;
    options.max_tokens = p.max_tokens;
    for (size_t i = 0; i < p.n_stop; ++i) {
      if (p.stop[i] == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_generate: stop string " + std::to_string(i) + " is null");
      options.stops.emplace_back(p.stop[i]);
    }
    if (p.on_text != nullptr) {
      options.on_text = [&](std::string_view text) { return p.on_text(text.data(), text.size(), p.user_data); };
    }
    if (p.on_token != nullptr) {
      options.on_token = [&](const engine::TokenLogprob& t, std::span<const engine::TokenLogprob> top) {
        static_assert(sizeof(engine::TokenLogprob) == sizeof(engine_token_logprob));
        const engine_token_logprob token{t.token, t.logprob};
        p.on_token(&token, reinterpret_cast<const engine_token_logprob*>(top.data()), top.size(), p.user_data);
      };
      options.n_top_logprobs = std::min<uint32_t>(p.n_top_logprobs, kMaxTopLogprobs);
    }
    engine::chat::generate(*s->session, *sampler->sampler, s->owner->tokenizer, options, out);
    return ENGINE_OK;
  });
  s->published();
  if (result != nullptr) *result = engine_chat_result{out.n_tokens, to_c(out.reason)};
  return status;
}

engine_status engine_chat_parse_tool_calls(const engine_model* m, const char* format, const char* reply,
                                           engine_chat_parsed** out) {
  if (out == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_parse_tool_calls: out is null");
  *out = nullptr;
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_chat_parse_tool_calls", "model");
  if (reply == nullptr) return fail(ENGINE_ERR_INVALID_ARGUMENT, "engine_chat_parse_tool_calls: reply is null");
  return chat_guarded("engine_chat_parse_tool_calls", [&] {
    const engine::chat::ToolCallFormat f = model_tool_call_format(*model, format);
    auto p = std::make_unique<ParsedObject>();
    p->reply = engine::chat::parse_tool_calls(reply, f);
    for (const engine::chat::ToolCall& c : p->reply.tool_calls) {
      p->calls.push_back({c.id.empty() ? nullptr : c.id.c_str(), c.name.c_str(), c.arguments.c_str()});
    }
    p->view = {p->reply.content.c_str(), p->calls.data(), p->calls.size(),
               engine::chat::tool_call_format_name(f).data(), nullptr};  // the names are literals: NUL-terminated
    p->view.internal = p.get();
    *out = &p.release()->view;
    return ENGINE_OK;
  });
}

void engine_chat_parsed_free(engine_chat_parsed* parsed) {
  if (parsed == nullptr) return;
  delete static_cast<ParsedObject*>(parsed->internal);
}

}  // extern "C"
