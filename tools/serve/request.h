// OpenAI requests read from their JSON bodies into what the engine needs:
// /v1/chat/completions (messages, tools, response_format, sampling) and
// /v1/completions (a prompt). Every field is checked for its type and range;
// a wrong one is HttpError 400 naming the field ("messages[2].content"), so
// what reaches the engine is well formed. Unknown fields are ignored, as
// OpenAI's clients send fields of newer API versions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/api/engine.hpp"
#include "tools/serve/http_error.h"

namespace serve {

// What both endpoints share.
struct GenerationRequest {
  std::optional<float> temperature;  // [0, 2]; unset: the engine's default
  std::optional<float> top_p;        // (0, 1]
  std::optional<uint32_t> seed;
  std::optional<uint32_t> max_tokens;  // >= 1; unset: the server's limit
  std::vector<std::string> stop;       // at most 16
  uint32_t top_logprobs = 0;           // [0, 20]
  bool logprobs = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

enum class ToolChoice { none, automatic, required, named };
enum class ResponseFormat { text, json_object, json_schema };

struct ChatRequest {
  GenerationRequest generation;
  std::vector<engine::api::Message> messages;
  std::string tools;  // the "tools" array's JSON text, "" for none
  ToolChoice tool_choice = ToolChoice::automatic;
  std::string tool_name;        // ToolChoice::named: the function
  std::string grammar_tools;    // required / named: the tools the reply must call (JSON array)
  ResponseFormat response_format = ResponseFormat::text;
  std::string schema;           // json_schema: the schema's JSON text
};

struct CompletionRequest {
  GenerationRequest generation;
  std::string prompt;
};

// Nesting deeper than this is refused (400): no tool schema or message needs
// it, and a body of 1 MiB of '[' must not reach recursive code.
inline constexpr int kMaxJsonDepth = 64;

ChatRequest parse_chat_request(std::string_view body);
CompletionRequest parse_completion_request(std::string_view body);

}  // namespace serve
