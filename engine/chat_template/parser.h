// Recursive-descent parser from tokens to the syntax tree, following jinja2's
// grammar and operator precedence (lowest first): `x if c else y`, or, and,
// not, comparisons and `in`, + -, ~, * / // %, **, unary - +, then postfix
// `.attr`, `[item]`, `[a:b:c]`, `(call)`, `| filter` and `is test`.
#pragma once

#include <string_view>
#include <vector>

#include "engine/chat_template/ast.h"
#include "engine/chat_template/lexer.h"

namespace engine::chat_template {

// Parses a whole template. Throws Error(syntax) naming the position, and
// Error(limit) when statements or expressions nest deeper than max_depth (a
// bound on the parser's own recursion).
Body parse(const std::vector<Token>& tokens, int max_depth);

}  // namespace engine::chat_template
