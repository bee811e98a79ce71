// Splits a template into tokens: raw text, the delimiters of `{{ }}` and
// `{% %}`, and the expression tokens between them. Whitespace control is
// applied here, as jinja2 does with Hugging Face's settings: `{%-`/`-%}`
// strip all whitespace on that side; trim_blocks drops the first newline after
// a block or comment tag; lstrip_blocks drops spaces and tabs between a line's
// start and a block or comment tag (`{%+` / `+%}` turn these off per tag).
// Comments `{# #}` leave no token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/chat_template/error.h"

namespace engine::chat_template {

struct Token {
  enum class Type { text, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };
  Type type;
  std::string text;  // text, a name, a string's decoded value, a number or an operator
  Pos pos;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws Error(syntax) on an unterminated tag, string or comment, or a
// character no expression may contain.
std::vector<Token> tokenize(std::string_view source, const LexOptions& options = {});

}  // namespace engine::chat_template
