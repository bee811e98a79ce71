#include "engine/chat/builtin_templates.h"

#include "engine/support/error.h"

namespace engine::chat {

namespace {

// ChatML as Qwen 2.5 writes it (no default system prompt): tools listed in
// the system turn, calls in <tool_call> tags, consecutive tool results in one
// user turn of <tool_response> tags.
constexpr std::string_view kChatml = R"TPL(
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- set turns = messages[1:] if has_system else messages -%}
{%- if tools -%}
  {{- '<|im_start|>system\n' + (messages[0].content + '\n\n' if has_system else '') -}}
  {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' -}}
  {{- 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' -}}
  {%- for tool in tools %}{{ '\n' + tool | tojson }}{% endfor -%}
  {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments ' -}}
  {{- 'within <tool_call></tool_call> XML tags:\n<tool_call>\n' -}}
  {{- '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif has_system -%}
  {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' -}}
{%- endif -%}
{%- for m in turns -%}
  {%- if m.role == 'tool' -%}
    {%- if loop.first or loop.previtem.role != 'tool' %}{{ '<|im_start|>user' }}{% endif -%}
    {{- '\n<tool_response>\n' + m.content + '\n</tool_response>' -}}
    {%- if loop.last or loop.nextitem.role != 'tool' %}{{ '<|im_end|>\n' }}{% endif -%}
  {%- else -%}
    {{- '<|im_start|>' + m.role + ('\n' + m.content if m.content or not m.tool_calls else '') -}}
    {%- for call in m.tool_calls or [] -%}
      {{- '\n<tool_call>\n{"name": "' + call.function.name + '", "arguments": ' -}}
      {{- call.function.arguments | tojson + '}\n</tool_call>' -}}
    {%- endfor -%}
    {{- '<|im_end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif -%}
)TPL";

// Llama 3.1 to 3.3: a system turn with the knowledge and today's dates, tools
// (when given) in the first user turn, calls as {"name", "parameters"} JSON and
// their results in "ipython" turns.
constexpr std::string_view kLlama3 = R"TPL(
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- set turns = messages[1:] if has_system else messages -%}
{{- bos_token + '<|start_header_id|>system<|end_header_id|>\n\n' -}}
{%- if tools %}{{ 'Environment: ipython\n' }}{% endif -%}
{{- 'Cutting Knowledge Date: December 2023\nToday Date: ' + strftime_now('%d %b %Y') + '\n\n' -}}
{{- (messages[0].content | trim if has_system else '') + '<|eot_id|>' -}}
{%- set ns = namespace(tools_pending=(tools or false)) -%}
{%- for m in turns -%}
  {%- if m.tool_calls -%}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
    {%- for call in m.tool_calls -%}
      {{- '{"name": "' + call.function.name + '", "parameters": ' + call.function.arguments | tojson + '}' -}}
    {%- endfor -%}
  {%- elif m.role == 'tool' or m.role == 'ipython' -%}
    {{- '<|start_header_id|>ipython<|end_header_id|>\n\n' + m.content | tojson -}}
  {%- else -%}
    {{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' -}}
    {%- if m.role == 'user' and ns.tools_pending -%}
      {{- 'Given the following functions, please respond with a JSON for a function call with its proper ' -}}
      {{- 'arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, ' -}}
      {{- '"parameters": dictionary of argument name and its value}.Do not use variables.\n\n' -}}
      {%- for tool in tools %}{{ tool | tojson(indent=4) + '\n\n' }}{% endfor -%}
      {%- set ns.tools_pending = false -%}
    {%- endif -%}
    {{- m.content | trim -}}
  {%- endif -%}
  {{- '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif -%}
)TPL";

// Gemma: user and model turns; a system prompt opens the first turn (as
// Gemma 3 does; Gemma 2's template refuses one), tool results are user turns.
constexpr std::string_view kGemma = R"TPL(
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- set turns = messages[1:] if has_system else messages -%}
{{- bos_token -}}
{%- for m in turns -%}
  {{- '<start_of_turn>' + ('model' if m.role == 'assistant' else 'user') + '\n' -}}
  {%- if loop.first and has_system %}{{ messages[0].content | trim + '\n\n' }}{% endif -%}
  {%- for call in m.tool_calls or [] -%}
    {{- {'name': call.function.name, 'arguments': call.function.arguments} | tojson -}}
  {%- else -%}
    {{- m.content | trim -}}
  {%- endfor -%}
  {{- '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif -%}
)TPL";

// Phi-3 and 3.5: <|system|>, <|user|> and <|assistant|> blocks closed by
// <|end|>; an empty system prompt is left out, EOS closes a finished chat.
// Calls are written as JSON, tool results as user blocks.
constexpr std::string_view kPhi3 = R"TPL(
{%- for m in messages -%}
  {%- if m.role == 'system' -%}
    {%- if m.content %}{{ '<|system|>\n' + m.content + '<|end|>\n' }}{% endif -%}
  {%- else -%}
    {{- ('<|assistant|>\n' if m.role == 'assistant' else '<|user|>\n') -}}
    {%- for call in m.tool_calls or [] -%}
      {{- {'name': call.function.name, 'arguments': call.function.arguments} | tojson -}}
    {%- else -%}
      {{- m.content -}}
    {%- endfor -%}
    {{- '<|end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif -%}
)TPL";

struct Builtin {
  std::string_view name, source;
};
constexpr Builtin kBuiltins[] = {{"chatml", kChatml}, {"llama3", kLlama3}, {"gemma", kGemma}, {"phi3", kPhi3}};

}  // namespace

const std::vector<std::string_view>& builtin_template_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n;
    for (const Builtin& b : kBuiltins) n.push_back(b.name);
    return n;
  }();
  return names;
}

std::string_view builtin_template(std::string_view name) {
  std::string known;
  for (const Builtin& b : kBuiltins) {
    if (b.name == name) return b.source;
    known += (known.empty() ? "" : ", ") + std::string(b.name);
  }
  throw Error("no built-in chat template named '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace engine::chat
