#include "engine/chat/messages.h"

#include <memory>

#include "engine/chat_template/json.h"
#include "engine/support/error.h"

namespace engine::chat {

namespace ct = chat_template;

namespace {

ct::Value parse(const std::string& text, const std::string& what) {
  try {
    return ct::parse_json(text);
  } catch (const ct::ValueError& e) {
    throw Error(what + " is not valid JSON: " + e.what());
  }
}

ct::Value dict(std::initializer_list<std::pair<const char*, ct::Value>> entries) {
  auto d = std::make_shared<ct::ValueDict>();
  for (const auto& [key, value] : entries) d->set(key, value);
  return ct::Value(std::move(d));
}

ct::Value message_value(const Message& m, size_t index) {
  const std::string where = "message " + std::to_string(index);
  if (m.role.empty()) throw Error(where + " has no role");
  // Keys in the order of OpenAI's messages, for templates that print a message whole.
  ct::Value v = dict({{"role", m.role}});
  if (!m.tool_call_id.empty()) v.dict().set("tool_call_id", m.tool_call_id);
  if (!m.name.empty()) v.dict().set("name", m.name);
  v.dict().set("content", m.content);
  if (!m.tool_calls.empty()) {
    ct::ValueList calls;
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
      const ToolCall& c = m.tool_calls[i];
      const std::string call = where + ", tool call " + std::to_string(i);
      if (c.name.empty()) throw Error(call + " has no name");
      ct::Value arguments = parse(c.arguments.empty() ? "{}" : c.arguments, call + ": the arguments");
      if (!arguments.is_dict()) throw Error(call + ": the arguments must be a JSON object");
      // Templates that echo call ids test `tool_call.id is defined`: no empty id.
      ct::Value value = c.id.empty() ? dict({}) : dict({{"id", c.id}});
      value.dict().set("type", "function");
      value.dict().set("function", dict({{"name", c.name}, {"arguments", arguments}}));
      calls.push_back(std::move(value));
    }
    v.dict().set("tool_calls", ct::Value(std::move(calls)));
  }
  return v;
}

}  // namespace

ct::Value template_variables(std::span<const Message> messages, const RenderOptions& options) {
  ct::ValueList list;
  for (size_t i = 0; i < messages.size(); ++i) list.push_back(message_value(messages[i], i));
  auto vars = std::make_shared<ct::ValueDict>();
  if (!options.variables.empty()) {
    const ct::Value extra = parse(options.variables, "the template variables");
    if (!extra.is_dict()) throw Error("the template variables must be a JSON object");
    for (const auto& [key, value] : extra.dict().entries) vars->set_key(key, value);
  }
  vars->set("messages", ct::Value(std::move(list)));
  vars->set("add_generation_prompt", options.add_generation_prompt);
  vars->set("bos_token", options.bos_token);
  vars->set("eos_token", options.eos_token);
  if (!options.tools.empty()) {
    ct::Value tools = parse(options.tools, "the tools");
    if (!tools.is_list()) throw Error("the tools must be a JSON array");
    vars->set("tools", std::move(tools));
  }
  return ct::Value(std::move(vars));
}

std::string render(const ct::Template& tmpl, std::span<const Message> messages, const RenderOptions& options) {
  return tmpl.render(template_variables(messages, options));
}

}  // namespace engine::chat
