#include "engine/chat/tool_calls.h"

#include <initializer_list>
#include <memory>
#include <optional>

#include "engine/chat_template/json.h"
#include "engine/chat_template/value.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"
#include "engine/support/error.h"
#include "engine/support/text.h"

namespace engine::chat {
namespace {

using chat_template::Value;
using chat_template::ValueDict;

// A call's name and arguments from a JSON object {"name": ..., <args>: {...}}.
std::optional<ToolCall> call_from(const Value& v, std::string_view args_key) {
  if (!v.is_dict()) return std::nullopt;
  const Value* name = v.dict().find("name");
  const Value* args = v.dict().find(args_key);
  if (name == nullptr || !name->is_string()) return std::nullopt;
  ToolCall call;
  call.name = name->as_string();
  call.arguments = args == nullptr ? "{}" : args->is_string() ? args->as_string() : chat_template::to_json(*args);
  if (const Value* id = v.dict().find("id"); id != nullptr && id->is_string()) call.id = id->as_string();
  return call;
}

// A reply with no call read from it: all of it is content.
ParsedReply content_only(std::string_view reply) { return {std::string(trim_space(reply)), {}}; }

// The JSON value at the start of s, and the rest; nullopt when it does not parse.
std::optional<Value> json_prefix(std::string_view s, std::string_view& rest) {
  try {
    size_t end = 0;
    Value v = chat_template::parse_json_prefix(s, end);
    rest = s.substr(end);
    return v;
  } catch (const chat_template::ValueError&) {
    return std::nullopt;
  }
}

// A reader of the argument syntaxes that are not JSON (Gemma 4's, Python's).
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(std::string_view word) {
    space();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  // Characters up to (not including) one of `stops`.
  std::string_view until(std::string_view stops) {
    const size_t start = i_;
    while (i_ < s_.size() && stops.find(s_[i_]) == std::string_view::npos) ++i_;
    return s_.substr(start, i_ - start);
  }
  std::string_view take_until(std::string_view marker, bool& found) {
    const size_t at = s_.find(marker, i_);
    found = at != std::string_view::npos;
    const std::string_view out = s_.substr(i_, (found ? at : s_.size()) - i_);
    i_ = found ? at + marker.size() : s_.size();
    return out;
  }
  size_t pos() const { return i_; }
  void advance() { ++i_; }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

struct BadSyntax {};

// A list's items after its '[' up to its ']', each read by `item`.
Value list_rest(Cursor& c, int depth, Value (*item)(Cursor&, int)) {
  chat_template::ValueList items;
  if (c.eat("]")) return Value(items);
  do {
    items.push_back(item(c, depth + 1));
  } while (c.eat(","));
  if (!c.eat("]")) throw BadSyntax{};
  return Value(std::move(items));
}

// A bare scalar: a JSON number, true / false / null (or Python's True /
// False / None), else the text itself.
Value scalar(std::string_view word) {
  word = trim_space(word);
  if (word == "true" || word == "True") return Value(true);
  if (word == "false" || word == "False") return Value(false);
  if (word == "null" || word == "None") return Value::none();
  try {
    return chat_template::parse_json(word);
  } catch (const chat_template::ValueError&) {
    return Value(std::string(word));
  }
}

// Gemma 4: {key:value,...}, [value,...], <|"|>text<|"|>, bare scalars.
Value gemma_value(Cursor& c, int depth) {
  if (depth > 64) throw BadSyntax{};
  if (c.eat("<|\"|>")) {
    bool found = false;
    const std::string_view text = c.take_until("<|\"|>", found);
    if (!found) throw BadSyntax{};
    return Value(std::string(text));
  }
  if (c.eat("{")) {
    auto dict = std::make_shared<ValueDict>();
    if (c.eat("}")) return Value(dict);
    do {
      c.space();
      const std::string key(trim_space(c.until(":}")));
      if (!c.eat(":")) throw BadSyntax{};
      dict->set(key, gemma_value(c, depth + 1));
    } while (c.eat(","));
    if (!c.eat("}")) throw BadSyntax{};
    return Value(dict);
  }
  if (c.eat("[")) return list_rest(c, depth, gemma_value);
  c.space();
  const std::string_view word = c.until(",}]");
  if (trim_space(word).empty()) throw BadSyntax{};
  return scalar(word);
}

// Python literals: 'text' or "text" (backslash escapes), numbers,
// True / False / None, [...], {key: value}.
Value python_value(Cursor& c, int depth) {
  if (depth > 64) throw BadSyntax{};
  c.space();
  const char q = c.peek();
  if (q == '\'' || q == '"') {
    c.advance();
    std::string text;
    while (!c.at_end() && c.peek() != q) {
      if (c.peek() == '\\') {
        c.advance();
        if (c.at_end()) throw BadSyntax{};
        const char e = c.peek();
        text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        text += c.peek();
      }
      c.advance();
    }
    if (c.at_end()) throw BadSyntax{};
    c.advance();
    return Value(std::move(text));
  }
  if (c.eat("[")) return list_rest(c, depth, python_value);
  if (c.eat("{")) {
    auto dict = std::make_shared<ValueDict>();
    if (c.eat("}")) return Value(dict);
    do {
      const Value key = python_value(c, depth + 1);
      if (!key.is_string() || !c.eat(":")) throw BadSyntax{};
      dict->set(key.as_string(), python_value(c, depth + 1));
    } while (c.eat(","));
    if (!c.eat("}")) throw BadSyntax{};
    return Value(dict);
  }
  const std::string_view word = c.until(",)]}");
  if (trim_space(word).empty()) throw BadSyntax{};
  return scalar(word);
}

// The text without the wrapper markers that held calls, trimmed.
std::string without(std::string_view text, std::initializer_list<std::string> markers) {
  std::string out(text);
  for (const std::string& m : markers) {
    for (size_t at = out.find(m); at != std::string::npos; at = out.find(m, at)) out.erase(at, m.size());
  }
  return std::string(trim_space(out));
}

// The calls between each `open` and `close` marker (no `close`: to the end),
// each read by `read`; what lies outside them (and any block that does not
// read) is content.
template <class Read>
ParsedReply blocks(std::string_view reply, std::string_view open, std::string_view close, Read&& read) {
  ParsedReply out;
  size_t at = 0;
  while (at < reply.size()) {
    const size_t start = reply.find(open, at);
    if (start == std::string_view::npos) break;
    const size_t inner = start + open.size();
    size_t end = close.empty() ? std::string_view::npos : reply.find(close, inner);
    const bool closed = end != std::string_view::npos;
    if (!closed) end = reply.size();  // a reply cut at max_tokens, or no closing marker at all
    std::vector<ToolCall> calls;
    if (read(reply.substr(inner, end - inner), calls)) {
      out.content += reply.substr(at, start - at);
      for (ToolCall& c : calls) out.tool_calls.push_back(std::move(c));
    } else {
      out.content += reply.substr(at, (closed ? end + close.size() : end) - at);
    }
    at = closed ? end + close.size() : end;
  }
  if (at < reply.size()) out.content += reply.substr(at);
  out.content = std::string(trim_space(out.content));
  return out;
}

// A JSON object or a list of them, with nothing but space after.
bool json_calls(std::string_view text, std::string_view args_key, std::vector<ToolCall>& calls) {
  std::string_view rest;
  const std::optional<Value> v = json_prefix(text, rest);
  if (!v || !trim_space(rest).empty()) return false;
  if (v->is_list()) {
    for (const Value& item : v->list()) {
      std::optional<ToolCall> c = call_from(item, args_key);
      if (!c) return false;
      calls.push_back(std::move(*c));
    }
    return !calls.empty();
  }
  std::optional<ToolCall> c = call_from(*v, args_key);
  if (c) calls.push_back(std::move(*c));
  return c.has_value();
}

ParsedReply mistral(std::string_view reply) {
  constexpr std::string_view kCalls = "[TOOL_CALLS]";
  ParsedReply out;
  const size_t first = reply.find(kCalls);
  if (first == std::string_view::npos) return content_only(reply);
  out.content = std::string(trim_space(reply.substr(0, first)));
  std::string_view rest = reply.substr(first);
  while (rest.starts_with(kCalls)) {
    rest.remove_prefix(kCalls.size());
    std::vector<ToolCall> calls;
    std::string_view after;
    if (const std::optional<Value> v = json_prefix(rest, after); v && v->is_list()) {  // [{"name", "arguments", "id"}]
      for (const Value& item : v->list()) {
        std::optional<ToolCall> c = call_from(item, "arguments");
        if (!c) return content_only(reply);
        calls.push_back(std::move(*c));
      }
    } else {  // name[ARGS]{...}
      const size_t args = rest.find("[ARGS]");
      if (args == std::string_view::npos) return content_only(reply);
      std::string_view json = rest.substr(args + 6);
      const std::optional<Value> a = json_prefix(json, after);
      if (!a || !a->is_dict()) return content_only(reply);
      calls.push_back({"", std::string(trim_space(rest.substr(0, args))), chat_template::to_json(*a)});
    }
    for (ToolCall& c : calls) out.tool_calls.push_back(std::move(c));
    rest = trim_space(after);
  }
  if (!rest.empty()) out.content += (out.content.empty() ? "" : "\n") + std::string(rest);
  return out;
}

bool gemma_calls(std::string_view text, std::vector<ToolCall>& calls) {
  try {
    Cursor c(text);
    if (!c.eat("call:")) return false;
    const std::string name(trim_space(c.until("{")));
    const Value args = gemma_value(c, 0);
    c.space();
    if (name.empty() || !args.is_dict() || !c.at_end()) return false;
    calls.push_back({"", name, chat_template::to_json(args)});
    return true;
  } catch (const BadSyntax&) {
    return false;
  }
}

bool python_calls(std::string_view text, std::vector<ToolCall>& calls) {
  try {
    Cursor c(text);
    if (!c.eat("[")) return false;
    do {
      c.space();
      const std::string name(trim_space(c.until("(")));
      if (name.empty() || !c.eat("(")) return false;
      auto args = std::make_shared<ValueDict>();
      if (!c.eat(")")) {
        do {
          c.space();
          const std::string key(trim_space(c.until("=")));
          if (key.empty() || !c.eat("=")) return false;
          args->set(key, python_value(c, 0));
        } while (c.eat(","));
        if (!c.eat(")")) return false;
      }
      calls.push_back({"", name, chat_template::to_json(Value(args))});
    } while (c.eat(","));
    if (!c.eat("]")) return false;
    c.space();
    return c.at_end();
  } catch (const BadSyntax&) {
    return false;
  }
}

// An argument of the XML-style formats: their templates write a string as
// itself and anything else as JSON, so text that is a whole JSON value other
// than a string is that value ("18" meant as text reads as 18: the tool's
// schema is not known here). `is_string` is the format's own say, when it has
// one (DeepSeek's string="true").
Value xml_argument(std::string_view text, std::optional<bool> is_string) {
  if (is_string != true) {
    try {
      Value v = chat_template::parse_json(trim_space(text));
      if (!v.is_string() || is_string == false) return v;
    } catch (const chat_template::ValueError&) {
    }
  }
  return Value(std::string(text));
}

// The text after `marker` up to `close`, moving `rest` past both; nullopt
// when either is missing.
std::optional<std::string_view> element(std::string_view& rest, std::string_view marker, std::string_view close) {
  rest = trim_space(rest);
  if (!rest.starts_with(marker)) return std::nullopt;
  const size_t end = rest.find(close, marker.size());
  if (end == std::string_view::npos) return std::nullopt;
  const std::string_view inner = rest.substr(marker.size(), end - marker.size());
  rest.remove_prefix(end + close.size());
  return inner;
}

// Qwen3-Coder's <function=NAME> element (inside <tool_call> or Seed-OSS's
// <seed:tool_call>): <parameter=KEY>\nVALUE\n</parameter> each.
bool function_element(std::string_view s, std::vector<ToolCall>& calls) {
  const size_t gt = s.find('>');
  if (gt == std::string_view::npos) return false;
  const std::string name(trim_space(s.substr(0, gt)));
  if (name.empty()) return false;
  auto args = std::make_shared<ValueDict>();
  std::string_view rest = s.substr(gt + 1);
  while (!trim_space(rest).empty()) {
    const std::optional<std::string_view> p = element(rest, "<parameter=", "</parameter>");
    if (!p) return false;
    const size_t kgt = p->find('>');
    if (kgt == std::string_view::npos) return false;
    std::string_view value = p->substr(kgt + 1);
    if (value.starts_with('\n')) value.remove_prefix(1);  // the template's own line breaks
    if (value.ends_with('\n')) value.remove_suffix(1);
    args->set(std::string(trim_space(p->substr(0, kgt))), xml_argument(value, std::nullopt));
  }
  calls.push_back({"", name, chat_template::to_json(Value(args))});
  return true;
}

// GLM's NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>... (GLM 4.5-4.7, Laguna).
bool glm_call(std::string_view s, std::vector<ToolCall>& calls) {
  const size_t first = s.find("<arg_key>");
  const std::string name(trim_space(s.substr(0, first)));
  if (name.empty() || name.find('<') != std::string::npos) return false;
  auto args = std::make_shared<ValueDict>();
  std::string_view rest = first == std::string_view::npos ? std::string_view() : s.substr(first);
  while (!trim_space(rest).empty()) {
    const std::optional<std::string_view> key = element(rest, "<arg_key>", "</arg_key>");
    const std::optional<std::string_view> value = key ? element(rest, "<arg_value>", "</arg_value>") : std::nullopt;
    if (!value) return false;
    args->set(std::string(trim_space(*key)), xml_argument(*value, std::nullopt));
  }
  calls.push_back({"", name, chat_template::to_json(Value(args))});
  return true;
}

// The <P invoke name="NAME"> elements of MiniMax-M2 (P ""), DeepSeek V3.2 / V4
// (P "｜DSML｜") and Glimmer (P "atem:"): <P parameter name="KEY"[ string="true"]>VALUE</P parameter> each;
// MiniMax-M3 writes <KEY>VALUE</KEY> instead, between its separator tokens.
ParsedReply invoke_calls(std::string_view text) {
  const std::string separated = without(text, {"]<]minimax[>["});
  const std::string_view reply = text.find("]<]minimax[>[") == std::string_view::npos ? text : separated;
  const size_t at = reply.find("invoke name=\"");
  const size_t lt = at == std::string_view::npos ? at : reply.rfind('<', at);
  if (lt == std::string_view::npos) return content_only(reply);
  const std::string prefix(reply.substr(lt + 1, at - lt - 1));
  const std::string open = "<" + prefix + "parameter name=\"", close = "</" + prefix + "parameter>";
  ParsedReply out = blocks(reply, "<" + prefix + "invoke name=\"", "</" + prefix + "invoke>",
                           [&](std::string_view s, std::vector<ToolCall>& calls) {
    const size_t q = s.find("\">");
    if (q == std::string_view::npos || q == 0) return false;
    auto args = std::make_shared<ValueDict>();
    std::string_view rest = s.substr(q + 2);
    while (!trim_space(rest).empty()) {
      rest = trim_space(rest);
      if (!rest.starts_with(open) && rest.starts_with('<') && !rest.starts_with("</")) {  // <KEY>VALUE</KEY>
        const size_t gt = rest.find('>');
        const std::string key(rest.substr(1, gt == std::string_view::npos ? 0 : gt - 1));
        const std::optional<std::string_view> v =
            key.empty() ? std::nullopt : element(rest, "<" + key + ">", "</" + key + ">");
        if (!v) return false;
        args->set(key, xml_argument(*v, std::nullopt));
        continue;
      }
      const std::optional<std::string_view> p = element(rest, open, close);
      if (!p) return false;
      const size_t kq = p->find('"');
      const size_t gt = kq == std::string_view::npos ? kq : p->find('>', kq);
      if (gt == std::string_view::npos) return false;
      const std::string_view attributes = p->substr(kq, gt - kq);
      const std::optional<bool> is_string = attributes.find("string=\"true\"") != std::string_view::npos    ? true
                                            : attributes.find("string=\"false\"") != std::string_view::npos ? false
                                                                                                         : std::optional<bool>();
      args->set(std::string(p->substr(0, kq)), xml_argument(p->substr(gt + 1), is_string));
    }
    calls.push_back({"", std::string(s.substr(0, q)), chat_template::to_json(Value(args))});
    return true;
  });
  if (!out.tool_calls.empty()) {
    out.content = without(out.content, {"<minimax:tool_call>", "</minimax:tool_call>", "<" + prefix + "function_calls>",
                                        "</" + prefix + "function_calls>", "<" + prefix + "tool_calls>",
                                        "</" + prefix + "tool_calls>"});
  }
  return out;
}

}  // namespace

std::string_view tool_call_format_name(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::hermes: return "hermes";
    case ToolCallFormat::list: return "list";
    case ToolCallFormat::llama3: return "llama3";
    case ToolCallFormat::mistral: return "mistral";
    case ToolCallFormat::gemma4: return "gemma4";
    case ToolCallFormat::pythonic: return "pythonic";
    case ToolCallFormat::functools: return "functools";
    case ToolCallFormat::qwen3_coder: return "qwen3_coder";
    case ToolCallFormat::glm: return "glm";
    case ToolCallFormat::invoke: return "invoke";
    case ToolCallFormat::none: break;
  }
  return "none";
}

ToolCallFormat tool_call_format(std::string_view t) {
  auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("[TOOL_CALLS]")) return ToolCallFormat::mistral;
  if (has("<tool_calls>")) return ToolCallFormat::list;
  if (has("<|tool_call>") && has("call:")) return ToolCallFormat::gemma4;
  if (has("<|tool_call_start|>")) return ToolCallFormat::pythonic;
  if (has("functools[")) return ToolCallFormat::functools;
  // <tool_call> also wraps these, so they come first.
  if (has("<function=") && has("<parameter=")) return ToolCallFormat::qwen3_coder;
  if (has("<arg_key>") && has("<arg_value>")) return ToolCallFormat::glm;
  if (has("invoke name=") && (has("parameter name=") || has("]<]minimax[>["))) return ToolCallFormat::invoke;
  if (has("<tool_call>")) return ToolCallFormat::hermes;
  if (has("<|start_header_id|>") && has("\"parameters\": ")) return ToolCallFormat::llama3;
  return ToolCallFormat::none;
}

ParsedReply parse_tool_calls(std::string_view reply, ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::hermes:
      return blocks(reply, "<tool_call>", "</tool_call>",
                    [](std::string_view s, std::vector<ToolCall>& calls) { return json_calls(s, "arguments", calls); });
    case ToolCallFormat::list:
      return blocks(reply, "<tool_calls>", "</tool_calls>",
                    [](std::string_view s, std::vector<ToolCall>& calls) { return json_calls(s, "arguments", calls); });
    case ToolCallFormat::llama3: {
      std::string_view body = trim_space(reply);
      if (body.starts_with("<|python_tag|>")) body.remove_prefix(14);
      std::vector<ToolCall> calls;
      // One call, or several separated by ';' (as Llama 3.2 writes them).
      size_t at = 0;
      while (at <= body.size()) {
        const size_t semi = body.find(';', at);
        const std::string_view part = body.substr(at, (semi == std::string_view::npos ? body.size() : semi) - at);
        if (!json_calls(part, "parameters", calls) && !json_calls(part, "arguments", calls)) {
          return content_only(reply);
        }
        if (semi == std::string_view::npos) break;
        at = semi + 1;
      }
      return {"", std::move(calls)};
    }
    case ToolCallFormat::mistral:
      return mistral(reply);
    case ToolCallFormat::gemma4:
      return blocks(reply, "<|tool_call>", "<tool_call|>", gemma_calls);
    case ToolCallFormat::pythonic:
      return blocks(reply, "<|tool_call_start|>", "<|tool_call_end|>", python_calls);
    case ToolCallFormat::functools:
      return blocks(reply, "functools", "",
                    [](std::string_view s, std::vector<ToolCall>& calls) { return json_calls(s, "arguments", calls); });
    case ToolCallFormat::qwen3_coder: {
      ParsedReply out = blocks(reply, "<function=", "</function>", function_element);
      if (!out.tool_calls.empty()) {
        out.content = without(out.content, {"<tool_call>", "</tool_call>", "<seed:tool_call>", "</seed:tool_call>"});
      }
      return out;
    }
    case ToolCallFormat::glm:
      return blocks(reply, "<tool_call>", "</tool_call>", glm_call);
    case ToolCallFormat::invoke:
      return invoke_calls(reply);
    case ToolCallFormat::none:
      break;
  }
  return {std::string(reply), {}};
}

ToolCallFormat tool_call_format_named(std::string_view name) {
  for (const ToolCallFormat f : {ToolCallFormat::none, ToolCallFormat::hermes, ToolCallFormat::list,
                                 ToolCallFormat::llama3, ToolCallFormat::mistral, ToolCallFormat::gemma4,
                                 ToolCallFormat::pythonic, ToolCallFormat::functools, ToolCallFormat::qwen3_coder,
                                 ToolCallFormat::glm, ToolCallFormat::invoke}) {
    if (tool_call_format_name(f) == name) return f;
  }
  throw Error("unknown tool-call format '" + std::string(name) + "'");
}

std::string tool_call_gbnf(std::string_view tools, ToolCallFormat format) {
  // What comes before and after the call's JSON object.
  std::string_view before, after;
  switch (format) {
    case ToolCallFormat::hermes: before = "<tool_call>\n", after = "\n</tool_call>"; break;
    case ToolCallFormat::list: before = "<tool_calls>[", after = "]</tool_calls>"; break;
    case ToolCallFormat::llama3: break;
    case ToolCallFormat::mistral: before = "[TOOL_CALLS][", after = "]"; break;
    case ToolCallFormat::functools: before = "functools[", after = "]"; break;
    case ToolCallFormat::qwen3_coder: case ToolCallFormat::glm: break;
    default:
      throw Error("tool calls in the " + std::string(tool_call_format_name(format)) + " format cannot be constrained");
  }
  Value list;
  try {
    list = chat_template::parse_json(tools);
  } catch (const chat_template::ValueError& e) {
    throw Error(std::string("tools: ") + e.what());
  }
  if (!list.is_list() || list.list().empty()) throw Error("tools: a non-empty JSON array of tools is needed");
  // Each tool's name and its arguments' schema.
  std::vector<std::pair<Value, Value>> named;
  for (size_t i = 0; i < list.list().size(); ++i) {
    const Value& tool = list.list()[i];
    const Value* fn = tool.is_dict() ? tool.dict().find("function") : nullptr;
    const Value* name = fn != nullptr && fn->is_dict() ? fn->dict().find("name") : nullptr;
    if (name == nullptr || !name->is_string()) throw Error("tools: tool " + std::to_string(i) + " has no function name");
    const Value* params = fn->dict().find("parameters");
    named.emplace_back(*name, params != nullptr ? *params : Value(std::make_shared<ValueDict>()));
  }

  if (format == ToolCallFormat::qwen3_coder || format == ToolCallFormat::glm) {
    const bool qwen = format == ToolCallFormat::qwen3_coder;
    const grammar::XmlArgumentSyntax syntax = qwen ? grammar::XmlArgumentSyntax{"<parameter=", ">\n", "\n</parameter>\n"}
                                                   : grammar::XmlArgumentSyntax{"<arg_key>", "</arg_key><arg_value>", "</arg_value>"};
    std::vector<grammar::XmlArguments> args;
    std::string root = "root ::= ";
    for (size_t i = 0; i < named.size(); ++i) {
      const std::string& name = named[i].first.as_string();
      args.push_back({"tool-" + std::to_string(i) + "-args", chat_template::to_json(named[i].second)});
      root += (i ? " | " : "") +
              grammar::gbnf_literal(qwen ? "<tool_call>\n<function=" + name + ">\n" : "<tool_call>" + name) + " " +
              args.back().root + " " + grammar::gbnf_literal(qwen ? "</function>\n</tool_call>" : "</tool_call>");
    }
    return root + "\n" + grammar::xml_arguments_to_gbnf(args, syntax);
  }

  // The calls as one schema: anyOf {"name": const, <args>: parameters}.
  const char* args_key = format == ToolCallFormat::llama3 ? "parameters" : "arguments";
  chat_template::ValueList calls;
  for (const auto& [name, params] : named) {
    auto props = std::make_shared<ValueDict>();
    auto name_schema = std::make_shared<ValueDict>();
    name_schema->set("const", name);
    props->set("name", Value(name_schema));
    props->set(args_key, params);
    auto call = std::make_shared<ValueDict>();
    call->set("type", Value("object"));
    call->set("properties", Value(props));
    call->set("required", Value(chat_template::ValueList{Value("name"), Value(args_key)}));
    calls.emplace_back(call);
  }
  auto schema = std::make_shared<ValueDict>();
  schema->set("anyOf", Value(std::move(calls)));
  std::string gbnf = grammar::json_schema_to_gbnf(chat_template::to_json(Value(schema)), "call");
  return "root ::= " + (before.empty() ? "" : grammar::gbnf_literal(before) + " ") + "call" +
         (after.empty() ? "" : " " + grammar::gbnf_literal(after)) + "\n" + gbnf;
}

}  // namespace engine::chat
