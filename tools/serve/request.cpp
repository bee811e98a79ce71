#include "tools/serve/request.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

namespace serve {

namespace {

using Json = nlohmann::ordered_json;  // keeps a schema's properties in the client's order

Json parse_body(std::string_view body) {
  Json j;
  try {
    j = Json::parse(body.begin(), body.end(), [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxJsonDepth) {
        throw HttpError(400, "the body nests JSON deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
      return true;
    });
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number like 3e1242
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...": the part after "] ".
    const std::string what = e.what();
    const size_t at = what.find("] ");
    throw HttpError(400, "the body is not JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!j.is_object()) throw HttpError(400, "the body must be a JSON object");
  return j;
}

std::string path(const std::string& parent, const std::string& key) { return parent.empty() ? key : parent + "." + key; }
std::string path(const std::string& parent, size_t index) { return parent + "[" + std::to_string(index) + "]"; }

[[noreturn]] void wrong(const std::string& param, const std::string& what) {
  throw HttpError(400, param + " must be " + what, param);
}

// The field, or nullptr when absent or null (OpenAI treats null as absent).
const Json* field(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::string> string_field(const Json& object, const char* key, const std::string& parent) {
  const Json* f = field(object, key);
  if (f == nullptr) return std::nullopt;
  if (!f->is_string()) wrong(path(parent, key), "a string");
  return f->get<std::string>();
}

std::optional<bool> bool_field(const Json& object, const char* key, const std::string& parent) {
  const Json* f = field(object, key);
  if (f == nullptr) return std::nullopt;
  if (!f->is_boolean()) wrong(path(parent, key), "true or false");
  return f->get<bool>();
}

std::optional<double> number_field(const Json& object, const char* key, double lo, double hi) {
  const Json* f = field(object, key);
  if (f == nullptr) return std::nullopt;
  char range_text[64];
  std::snprintf(range_text, sizeof(range_text), "a number from %g to %g", lo, hi);
  const std::string range = range_text;
  if (!f->is_number()) wrong(key, range);
  const double v = f->get<double>();
  if (!(v >= lo && v <= hi)) wrong(key, range);
  return v;
}

std::optional<int64_t> integer_field(const Json& object, const char* key, int64_t lo, int64_t hi) {
  const Json* f = field(object, key);
  if (f == nullptr) return std::nullopt;
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (f->is_number_unsigned()) {
    const uint64_t v = f->get<uint64_t>();
    if (v > static_cast<uint64_t>(hi) || (lo > 0 && v < static_cast<uint64_t>(lo))) wrong(key, range);
    return static_cast<int64_t>(v);
  }
  if (!f->is_number_integer()) wrong(key, range);
  const int64_t v = f->get<int64_t>();
  if (v < lo || v > hi) wrong(key, range);
  return v;
}

const Json& object_field(const Json& object, const char* key, const std::string& parent) {
  const Json* f = field(object, key);
  if (f == nullptr) throw HttpError(400, path(parent, key) + " is missing", path(parent, key));
  if (!f->is_object()) wrong(path(parent, key), "an object");
  return *f;
}

GenerationRequest parse_generation(const Json& body) {
  GenerationRequest g;
  if (auto t = number_field(body, "temperature", 0, 2)) g.temperature = static_cast<float>(*t);
  if (auto p = number_field(body, "top_p", 0, 1)) {
    if (*p == 0) wrong("top_p", "above 0");
    g.top_p = static_cast<float>(*p);
  }
  if (auto s = integer_field(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max())) {
    g.seed = static_cast<uint32_t>(*s);  // the low 32 bits; -1 (0xFFFFFFFF) asks for a random seed, as in llama.cpp
  }
  const int64_t max_tokens_bound = std::numeric_limits<int32_t>::max();
  if (auto m = integer_field(body, "max_tokens", 1, max_tokens_bound)) g.max_tokens = static_cast<uint32_t>(*m);
  if (auto m = integer_field(body, "max_completion_tokens", 1, max_tokens_bound)) {
    g.max_tokens = static_cast<uint32_t>(*m);  // the newer name wins
  }
  if (auto n = integer_field(body, "n", 1, std::numeric_limits<int64_t>::max()); n && *n != 1) {
    throw HttpError(400, "n must be 1: one choice per request", "n");
  }
  if (const Json* stop = field(body, "stop")) {
    if (stop->is_string()) {
      g.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array() && stop->size() <= 16) {
      for (size_t i = 0; i < stop->size(); ++i) {
        if (!(*stop)[i].is_string()) wrong(path("stop", i), "a string");
        g.stop.push_back((*stop)[i].get<std::string>());
      }
    } else {
      wrong("stop", "a string or an array of at most 16 strings");
    }
    for (size_t i = 0; i < g.stop.size(); ++i) {
      if (g.stop[i].empty()) wrong(stop->is_string() ? "stop" : path("stop", i), "a non-empty string");
    }
  }
  g.stream = bool_field(body, "stream", "").value_or(false);
  if (const Json* options = field(body, "stream_options")) {
    if (!options->is_object()) wrong("stream_options", "an object");
    g.include_usage = bool_field(*options, "include_usage", "stream_options").value_or(false);
  }
  for (const char* penalty : {"presence_penalty", "frequency_penalty"}) {
    if (auto p = number_field(body, penalty, -2, 2); p && *p != 0) {
      throw HttpError(400, std::string(penalty) + " is not supported (0 only)", penalty);
    }
  }
  return g;
}

// A message's content: a string, or text parts joined by newlines.
std::string parse_content(const Json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) wrong(param, "a string or an array of text parts");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = path(param, i);
    if (!part.is_object()) wrong(at, "an object");
    const std::string type = string_field(part, "type", at).value_or("");
    if (type != "text") throw HttpError(400, at + ": only text parts are supported (got type '" + type + "')", at);
    const std::optional<std::string> t = string_field(part, "text", at);
    if (!t) throw HttpError(400, path(at, "text") + " is missing", path(at, "text"));
    if (i != 0) text += '\n';
    text += *t;
  }
  return text;
}

std::vector<engine::api::ToolCall> parse_tool_calls(const Json& calls, const std::string& param) {
  if (!calls.is_array()) wrong(param, "an array");
  std::vector<engine::api::ToolCall> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string at = path(param, i);
    if (!calls[i].is_object()) wrong(at, "an object");
    const Json& function = object_field(calls[i], "function", at);
    const std::string fpath = path(at, "function");
    engine::api::ToolCall call;
    call.id = string_field(calls[i], "id", at).value_or("");
    const std::optional<std::string> name = string_field(function, "name", fpath);
    if (!name) throw HttpError(400, path(fpath, "name") + " is missing", path(fpath, "name"));
    call.name = *name;
    call.arguments = string_field(function, "arguments", fpath).value_or("{}");
    const Json args = Json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
    if (!args.is_object()) wrong(path(fpath, "arguments"), "a JSON object's text");
    out.push_back(std::move(call));
  }
  return out;
}

std::vector<engine::api::Message> parse_messages(const Json& body) {
  const Json* messages = field(body, "messages");
  if (messages == nullptr) throw HttpError(400, "messages is missing", "messages");
  if (!messages->is_array() || messages->empty()) wrong("messages", "a non-empty array of messages");
  std::vector<engine::api::Message> out;
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    const std::string at = path("messages", i);
    if (!m.is_object()) wrong(at, "an object");
    const std::string role = string_field(m, "role", at).value_or("");
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" && role != "tool") {
      wrong(path(at, "role"), "one of system, developer, user, assistant, tool");
    }
    engine::api::Message msg;
    msg.role = role == "developer" ? "system" : role;  // OpenAI's newer name for the system prompt
    if (const Json* content = field(m, "content")) {
      msg.content = parse_content(*content, path(at, "content"));
    } else if (role != "assistant") {
      throw HttpError(400, path(at, "content") + " is missing", path(at, "content"));
    }
    if (const Json* calls = field(m, "tool_calls")) {
      if (role != "assistant") throw HttpError(400, path(at, "tool_calls") + ": only an assistant's message has them");
      msg.tool_calls = parse_tool_calls(*calls, path(at, "tool_calls"));
    }
    msg.tool_call_id = string_field(m, "tool_call_id", at).value_or("");
    msg.name = string_field(m, "name", at).value_or("");
    out.push_back(std::move(msg));
  }
  return out;
}

// Checks the tools' shape; returns their names in order.
std::vector<std::string> parse_tools(const Json& tools) {
  if (!tools.is_array()) wrong("tools", "an array");
  std::vector<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string at = path("tools", i);
    if (!tools[i].is_object()) wrong(at, "an object");
    if (string_field(tools[i], "type", at).value_or("function") != "function") wrong(path(at, "type"), "\"function\"");
    const Json& function = object_field(tools[i], "function", at);
    const std::string fpath = path(at, "function");
    const std::optional<std::string> name = string_field(function, "name", fpath);
    if (!name || name->empty()) throw HttpError(400, path(fpath, "name") + " is missing", path(fpath, "name"));
    if (const Json* p = field(function, "parameters"); p != nullptr && !p->is_object()) {
      wrong(path(fpath, "parameters"), "a JSON Schema object");
    }
    names.push_back(*name);
  }
  return names;
}

void parse_tool_choice(const Json& body, const std::vector<std::string>& names, ChatRequest& r) {
  const Json* choice = field(body, "tool_choice");
  if (choice == nullptr) {
    r.tool_choice = names.empty() ? ToolChoice::none : ToolChoice::automatic;
    return;
  }
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "none") r.tool_choice = ToolChoice::none;
    else if (c == "auto") r.tool_choice = ToolChoice::automatic;
    else if (c == "required") r.tool_choice = ToolChoice::required;
    else wrong("tool_choice", "\"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  } else if (choice->is_object()) {
    const Json& function = object_field(*choice, "function", "tool_choice");
    r.tool_name = string_field(function, "name", "tool_choice.function").value_or("");
    r.tool_choice = ToolChoice::named;
    bool known = false;
    for (const std::string& n : names) known = known || n == r.tool_name;
    if (!known) throw HttpError(400, "tool_choice names '" + r.tool_name + "', which is not in tools", "tool_choice");
  } else {
    wrong("tool_choice", "a string or an object");
  }
  if (r.tool_choice != ToolChoice::none && names.empty()) {
    throw HttpError(400, "tool_choice asks for a tool call but there are no tools", "tool_choice");
  }
}

void parse_response_format(const Json& body, ChatRequest& r) {
  const Json* format = field(body, "response_format");
  if (format == nullptr) return;
  if (!format->is_object()) wrong("response_format", "an object");
  const std::string type = string_field(*format, "type", "response_format").value_or("");
  if (type == "text") {
    r.response_format = ResponseFormat::text;
  } else if (type == "json_object") {
    r.response_format = ResponseFormat::json_object;
  } else if (type == "json_schema") {
    const Json& spec = object_field(*format, "json_schema", "response_format");
    r.response_format = ResponseFormat::json_schema;
    r.schema = object_field(spec, "schema", "response_format.json_schema").dump();
  } else {
    wrong("response_format.type", "\"text\", \"json_object\" or \"json_schema\"");
  }
}

}  // namespace

ChatRequest parse_chat_request(std::string_view body_text) {
  const Json body = parse_body(body_text);
  ChatRequest r;
  r.generation = parse_generation(body);
  if (auto lp = bool_field(body, "logprobs", "")) r.generation.logprobs = *lp;
  if (auto top = integer_field(body, "top_logprobs", 0, 20)) {
    if (!r.generation.logprobs && *top > 0) throw HttpError(400, "top_logprobs needs logprobs: true", "top_logprobs");
    r.generation.top_logprobs = static_cast<uint32_t>(*top);
  }
  r.messages = parse_messages(body);
  std::vector<std::string> names;
  if (const Json* tools = field(body, "tools")) {
    names = parse_tools(*tools);
    if (!names.empty()) r.tools = tools->dump();
  }
  parse_tool_choice(body, names, r);
  if (r.tool_choice == ToolChoice::none) r.tools.clear();  // the model is not shown them
  if (r.tool_choice == ToolChoice::required) r.grammar_tools = r.tools;
  if (r.tool_choice == ToolChoice::named) {
    Json only = Json::array();
    for (const Json& t : body["tools"]) {
      if (t["function"]["name"] == r.tool_name) only.push_back(t);
    }
    r.grammar_tools = only.dump();
  }
  parse_response_format(body, r);
  if (r.response_format != ResponseFormat::text && !r.grammar_tools.empty()) {
    throw HttpError(400, "response_format and a required tool call cannot both shape the reply", "response_format");
  }
  return r;
}

CompletionRequest parse_completion_request(std::string_view body_text) {
  const Json body = parse_body(body_text);
  CompletionRequest r;
  r.generation = parse_generation(body);
  if (!r.generation.max_tokens) r.generation.max_tokens = 16;  // OpenAI's default for completions
  if (auto lp = integer_field(body, "logprobs", 0, 5)) {
    r.generation.logprobs = true;
    r.generation.top_logprobs = static_cast<uint32_t>(*lp);
  }
  const Json* prompt = field(body, "prompt");
  if (prompt == nullptr) throw HttpError(400, "prompt is missing", "prompt");
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    r.prompt = (*prompt)[0].get<std::string>();
  } else if (prompt->is_string()) {
    r.prompt = prompt->get<std::string>();
  } else {
    wrong("prompt", "a string (or an array of one string)");
  }
  if (bool_field(body, "echo", "").value_or(false)) throw HttpError(400, "echo is not supported", "echo");
  return r;
}

}  // namespace serve
