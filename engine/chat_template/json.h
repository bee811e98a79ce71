// JSON in and out of template values: the conversation files a prompt is
// rendered from, and the `tojson` filter (Python's json.dumps as Hugging Face
// calls it: no ASCII escaping, keys in the given order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/chat_template/value.h"

namespace engine::chat_template {

// Parses JSON text; integers become int, other numbers float. Throws
// ValueError naming the byte offset on malformed input or nesting deeper
// than 512 levels.
Value parse_json(std::string_view text);
// The JSON value at the start of text (after spaces), with `end` set to the
// byte after it: what follows is the caller's (a model's reply that goes on
// after a tool call's JSON).
Value parse_json_prefix(std::string_view text, size_t& end);

struct JsonStyle {
  std::optional<int> indent;            // None: one line
  bool sort_keys = false;
  std::optional<std::string> item_separator, key_separator;  // json.dumps' separators
  size_t max_bytes = SIZE_MAX;          // LimitError beyond
};

// json.dumps(v, ensure_ascii=False, ...) in the given style. Throws
// ValueError for values JSON cannot hold (undefined, callables).
std::string to_json(const Value& v, const JsonStyle& style = {});

}  // namespace engine::chat_template
