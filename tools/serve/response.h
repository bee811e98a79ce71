// OpenAI's response objects: chat.completion and its streamed
// chat.completion.chunk, text_completion, their usage and logprobs, and the
// server-sent-event framing of a stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/api/engine.hpp"

namespace serve {

using Json = nlohmann::ordered_json;

// What every object of one response shares.
struct ResponseMeta {
  std::string id;  // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  std::string model;
};

struct TokenLogprob {
  std::string piece;  // the token's bytes (may be part of a character)
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;
};

struct Usage {
  size_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
};

std::string new_id(const char* prefix);

// Ill-formed UTF-8 (a token's piece of a character) becomes U+FFFD.
std::string dump(const Json& j);
std::string sse_event(const Json& j);  // "data: {...}\n\n"
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

// "stop", "length" (max_tokens or the context), "tool_calls".
const char* finish_reason(engine_chat_stop_reason reason, bool tool_calls);

Json usage_json(const Usage& u);
Json tool_calls_json(const std::vector<engine::api::ToolCall>& calls, bool streamed);
// The chat form {"content": [{token, logprob, bytes, top_logprobs}]}.
Json chat_logprobs_json(const std::vector<TokenLogprob>& tokens);
// The completions form {tokens, token_logprobs, top_logprobs, text_offset}.
Json completion_logprobs_json(const std::vector<TokenLogprob>& tokens, size_t text_offset);

Json chat_completion(const ResponseMeta& m, const std::optional<std::string>& content,
                     const std::vector<engine::api::ToolCall>& calls, const Json& logprobs, const char* finish,
                     const Usage& usage);
Json chat_chunk(const ResponseMeta& m, const Json& delta, const Json& logprobs, const char* finish);
Json usage_chunk(const ResponseMeta& m, const char* object, const Usage& usage);
Json text_completion(const ResponseMeta& m, const std::string& text, const Json& logprobs, const char* finish,
                     const std::optional<Usage>& usage);

}  // namespace serve
