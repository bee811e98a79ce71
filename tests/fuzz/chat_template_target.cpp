// The chat-template renderer on arbitrary text: lexing, parsing and rendering
// a hostile template must end in output or engine::chat_template::Error
// (syntax, runtime, raised or a sandbox limit), never a crash, a sanitizer
// report, a leak, a hang or another exception. The limits are tighter than the
// defaults so each input stays fast; the bounds' logic is the same.
//
// Input: the template text, optionally followed by a NUL and a conversation
// in JSON (its reader is fuzzed too); without one, a conversation with a
// system prompt, a tool call and a tool result.
#include <string>
#include <string_view>

#include "engine/chat_template/chat_template.h"
#include "engine/chat_template/json.h"
#include "tests/fuzz/targets.h"

namespace engine_fuzz {

namespace ct = engine::chat_template;

namespace {

constexpr std::string_view kConversation = R"({
  "messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris? é🙂"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "a1", "type": "function",
      "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "a1", "content": "{\"t\": 18}"}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
  "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "extra": {"enable_thinking": false}
})";

}  // namespace

int chat_template(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view source = input.substr(0, nul);
  ct::Options options;
  options.limits.max_steps = 200000;
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_loop_iterations = 20000;
  options.now = [] {
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    return tm;
  };
  ct::Value variables;
  try {
    variables = ct::conversation_variables(ct::parse_json(nul == std::string_view::npos ? kConversation : input.substr(nul + 1)));
  } catch (const ct::ValueError&) {
    return 0;  // malformed conversation JSON: refused, as it should be
  }
  try {
    const std::string out = ct::Template(source, options).render(variables);
    if (out.size() > options.limits.max_output_bytes) broken("the output passed max_output_bytes");
  } catch (const ct::Error& e) {
    if (e.line() < 1 || e.column() < 1) broken(std::string("an error without a position: ") + e.what());
  }
  return 0;
}

}  // namespace engine_fuzz
