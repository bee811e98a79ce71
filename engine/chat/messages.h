// A conversation as an app holds it (messages with roles, tool calls and tool
// results) rendered into a prompt by a chat template, the way Hugging Face's
// apply_chat_template calls the template: `messages` (OpenAI's shape, tool
// call arguments as objects), `add_generation_prompt`, `bos_token`,
// `eos_token`, `tools` when given, and further variables.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/chat_template/chat_template.h"

namespace engine::chat {

struct ToolCall {
  std::string id;         // "" leaves it out
  std::string name;
  std::string arguments;  // a JSON object's text
};

struct Message {
  std::string role;  // "system", "user", "assistant", "tool", ...
  std::string content;
  std::vector<ToolCall> tool_calls;  // an assistant's calls
  std::string tool_call_id;          // a tool result: the call it answers ("" leaves it out)
  std::string name;                  // a tool result: the tool's name ("" leaves it out)
};

struct RenderOptions {
  bool add_generation_prompt = true;
  std::string tools;      // a JSON array of tool schemas (OpenAI's shape); "" for none
  std::string variables;  // a JSON object of further template variables ("enable_thinking"); "" for none
  std::string bos_token, eos_token;
};

// The template's variables for `messages`. Throws engine::Error naming the
// message or option whose JSON does not parse or has the wrong shape.
chat_template::Value template_variables(std::span<const Message> messages, const RenderOptions& options);

// Renders `messages` with `tmpl`. Throws engine::Error as above, and
// chat_template::Error when the template fails or raises (its own message).
std::string render(const chat_template::Template& tmpl, std::span<const Message> messages,
                   const RenderOptions& options);

}  // namespace engine::chat
