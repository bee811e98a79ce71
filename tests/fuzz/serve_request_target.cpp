// serve's reading of OpenAI request bodies (tools/serve/request.h) on
// arbitrary bytes: a request, or HttpError 400 naming the problem, nothing
// else (nlohmann's type_error would be a field used before its type was
// checked). What parses is written back into response objects, which must be
// JSON that parses again (ill-formed UTF-8 replaced, never thrown).
//
// Input: a byte choosing the endpoint (even: chat, odd: completions), then the body.
#include <string>

#include <nlohmann/json.hpp>

#include "tests/fuzz/targets.h"
#include "tools/serve/http_error.h"
#include "tools/serve/request.h"
#include "tools/serve/response.h"

namespace engine_fuzz {

namespace {

void check_generation(const serve::GenerationRequest& g) {
  if (g.max_tokens && *g.max_tokens == 0) broken("max_tokens 0 accepted");
  if (g.temperature && !(*g.temperature >= 0 && *g.temperature <= 2)) broken("temperature out of range accepted");
  if (g.top_p && !(*g.top_p > 0 && *g.top_p <= 1)) broken("top_p out of range accepted");
  if (g.top_logprobs > 20) broken("top_logprobs over 20 accepted");
  for (const std::string& s : g.stop) {
    if (s.empty()) broken("an empty stop string accepted");
  }
}

void check_dumps(const serve::Json& j) {
  const std::string text = serve::dump(j);
  if (!nlohmann::json::accept(text)) broken("a response is not JSON: " + text.substr(0, 200));
}

}  // namespace

int serve_request(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const serve::ResponseMeta meta{"id", 0, "model"};
  try {
    if ((data[0] & 1) == 0) {
      const serve::ChatRequest r = serve::parse_chat_request(body);
      check_generation(r.generation);
      if (r.messages.empty()) broken("a chat request without messages accepted");
      if (!r.tools.empty() && !nlohmann::json::parse(r.tools).is_array()) broken("tools are not an array");
      const bool must_call = r.tool_choice == serve::ToolChoice::required || r.tool_choice == serve::ToolChoice::named;
      if (must_call == r.grammar_tools.empty()) broken("a required call without its tools, or tools without one");
      if (r.response_format == serve::ResponseFormat::json_schema && !nlohmann::json::parse(r.schema).is_object()) {
        broken("a schema that is not an object accepted");
      }
      std::string text;
      std::vector<engine::api::ToolCall> calls;
      for (const engine::api::Message& m : r.messages) {
        text += m.content;
        calls.insert(calls.end(), m.tool_calls.begin(), m.tool_calls.end());
      }
      check_dumps(serve::chat_completion(meta, text, calls, serve::chat_logprobs_json({{text, -1, {{text, -1}}}}),
                                         "stop", {}));
      check_dumps(serve::chat_chunk(meta, {{"content", text}}, nullptr, nullptr));
    } else {
      const serve::CompletionRequest r = serve::parse_completion_request(body);
      check_generation(r.generation);
      check_dumps(serve::text_completion(meta, r.prompt, serve::completion_logprobs_json({{r.prompt, -1, {}}}, 0),
                                         "length", serve::Usage{}));
    }
  } catch (const serve::HttpError& e) {
    if (e.status != 400) broken("a body refused with " + std::to_string(e.status) + ": " + e.what());
    if (std::string(e.what()).empty()) broken("an error without a message");
  }
  return 0;
}

}  // namespace engine_fuzz
