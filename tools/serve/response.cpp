#include "tools/serve/response.h"

#include <mutex>
#include <random>

namespace serve {

std::string new_id(const char* prefix) {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  const std::lock_guard lock(mutex);
  static const char* const kHex = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kHex[rng() & 15];
  return id;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string sse_event(const Json& j) { return "data: " + dump(j) + "\n\n"; }

const char* finish_reason(engine_chat_stop_reason reason, bool tool_calls) {
  if (tool_calls) return "tool_calls";
  return reason == ENGINE_CHAT_MAX_TOKENS || reason == ENGINE_CHAT_CONTEXT_FULL ? "length" : "stop";
}

Json usage_json(const Usage& u) {
  return Json{{"prompt_tokens", u.prompt_tokens},
              {"completion_tokens", u.completion_tokens},
              {"total_tokens", u.prompt_tokens + u.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

Json tool_calls_json(const std::vector<engine::api::ToolCall>& calls, bool streamed) {
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    Json c;
    if (streamed) c["index"] = i;
    c["id"] = calls[i].id.empty() ? new_id("call_") : calls[i].id;
    c["type"] = "function";
    c["function"] = {{"name", calls[i].name}, {"arguments", calls[i].arguments}};
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

Json bytes_of(const std::string& piece) {
  Json b = Json::array();
  for (const char c : piece) b.push_back(static_cast<unsigned char>(c));
  return b;
}

}  // namespace

Json chat_logprobs_json(const std::vector<TokenLogprob>& tokens) {
  Json content = Json::array();
  for (const TokenLogprob& t : tokens) {
    Json top = Json::array();
    for (const auto& [piece, lp] : t.top) top.push_back({{"token", piece}, {"logprob", lp}, {"bytes", bytes_of(piece)}});
    content.push_back({{"token", t.piece}, {"logprob", t.logprob}, {"bytes", bytes_of(t.piece)}, {"top_logprobs", top}});
  }
  return Json{{"content", content}};
}

Json completion_logprobs_json(const std::vector<TokenLogprob>& tokens, size_t text_offset) {
  Json pieces = Json::array(), lps = Json::array(), tops = Json::array(), offsets = Json::array();
  for (const TokenLogprob& t : tokens) {
    pieces.push_back(t.piece);
    lps.push_back(t.logprob);
    Json top = Json::object();
    for (const auto& [piece, lp] : t.top) top[piece] = lp;
    tops.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += t.piece.size();
  }
  return Json{{"tokens", pieces}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

Json chat_completion(const ResponseMeta& m, const std::optional<std::string>& content,
                     const std::vector<engine::api::ToolCall>& calls, const Json& logprobs, const char* finish,
                     const Usage& usage) {
  Json message = {{"role", "assistant"}, {"content", content ? Json(*content) : Json(nullptr)}};
  if (!calls.empty()) message["tool_calls"] = tool_calls_json(calls, false);
  Json choice = {{"index", 0}, {"message", message}, {"logprobs", logprobs}, {"finish_reason", finish}};
  return Json{{"id", m.id},           {"object", "chat.completion"}, {"created", m.created},
              {"model", m.model},     {"choices", Json::array({choice})}, {"usage", usage_json(usage)},
              {"system_fingerprint", nullptr}};
}

Json chat_chunk(const ResponseMeta& m, const Json& delta, const Json& logprobs, const char* finish) {
  Json choice = {{"index", 0}, {"delta", delta}, {"logprobs", logprobs},
                 {"finish_reason", finish != nullptr ? Json(finish) : Json(nullptr)}};
  return Json{{"id", m.id}, {"object", "chat.completion.chunk"}, {"created", m.created}, {"model", m.model},
              {"choices", Json::array({choice})}};
}

Json usage_chunk(const ResponseMeta& m, const char* object, const Usage& usage) {
  return Json{{"id", m.id},       {"object", object},           {"created", m.created},
              {"model", m.model}, {"choices", Json::array()}, {"usage", usage_json(usage)}};
}

Json text_completion(const ResponseMeta& m, const std::string& text, const Json& logprobs, const char* finish,
                     const std::optional<Usage>& usage) {
  Json choice = {{"index", 0}, {"text", text}, {"logprobs", logprobs},
                 {"finish_reason", finish != nullptr ? Json(finish) : Json(nullptr)}};
  Json out = {{"id", m.id}, {"object", "text_completion"}, {"created", m.created}, {"model", m.model},
              {"choices", Json::array({choice})}};
  if (usage) out["usage"] = usage_json(*usage);
  return out;
}

}  // namespace serve
