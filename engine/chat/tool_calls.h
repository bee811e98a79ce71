// A model's reply read back into tool calls, in the format its chat template
// shows the model (the template renders the calls of earlier turns that way,
// so the format is read from the template's text):
//
//   hermes     <tool_call>{"name": ..., "arguments": {...}}</tool_call>     Qwen 2.5/3, Hermes, Granite 4
//   list       <tool_calls>[{"name", "arguments", "id"}, ...]</tool_calls>  Apriel, MiniMax-M1
//   llama3     {"name": ..., "parameters": {...}}, the whole reply           Llama 3.1-3.3
//   mistral    [TOOL_CALLS][{"name", "arguments", "id"}, ...]                Mistral Nemo (v3)
//              [TOOL_CALLS]name[ARGS]{...}                                   Devstral, Ministral 3
//   gemma4     <|tool_call>call:name{key:<|"|>text<|"|>,n:1}<tool_call|>     Gemma 4
//   pythonic   <|tool_call_start|>[name(key='text', n=1)]<|tool_call_end|>  LFM2 / LFM2.5
//   functools  functools[{"name": ..., "arguments": {...}}, ...]             Phi-4-mini, FireFunction v2
//   qwen3_coder <tool_call><function=name><parameter=key>v</parameter>...   Qwen3-Coder, Nemotron 3, StepFun 3.5,
//              </function></tool_call> (Seed-OSS: <seed:tool_call>)          Seed-OSS
//   glm        <tool_call>name<arg_key>key</arg_key><arg_value>v</arg_value>  GLM 4.7, Laguna
//   invoke     <invoke name="name"><parameter name="key">v</parameter>       MiniMax-M2 / M3, DeepSeek V3.2 / V4
//              </invoke> (DeepSeek's and Glimmer's tags prefixed)             (DSML), Glimmer
//
// In the XML-style formats (the last three) a value is text; one that is a
// whole JSON value other than a string is read as that value, as their
// templates write non-string arguments as JSON.
// Arguments come back as JSON object text. Text around the calls is the
// reply's content; a call that does not parse stays in the content, so
// nothing the model wrote is lost.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/messages.h"

namespace engine::chat {

enum class ToolCallFormat { none, hermes, list, llama3, mistral, gemma4, pythonic, functools, qwen3_coder, glm, invoke };

std::string_view tool_call_format_name(ToolCallFormat f);
// The format a chat template writes tool calls in, judged by its text; none
// for a template that shows none.
ToolCallFormat tool_call_format(std::string_view template_source);

struct ParsedReply {
  std::string content;
  std::vector<ToolCall> tool_calls;
};
ParsedReply parse_tool_calls(std::string_view reply, ToolCallFormat format);
ToolCallFormat tool_call_format_named(std::string_view name);  // throws engine::Error for an unknown one

// A GBNF grammar (start rule "root") whose sentences are one call, in
// `format`, of one of `tools` (a JSON array of OpenAI function tools), its
// arguments valid under the tool's "parameters" schema (json_schema.h): for
// a reply that must call a tool. The formats whose calls are JSON (hermes,
// list, llama3, mistral's JSON list form, functools) and qwen3_coder and glm,
// whose text arguments then hold no '<' (xml_arguments_to_gbnf); another
// format, or a schema keyword the converter does not take, throws
// engine::Error naming it.
std::string tool_call_gbnf(std::string_view tools, ToolCallFormat format);

}  // namespace engine::chat
