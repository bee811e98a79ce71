// Walks the syntax tree and writes the output. Scopes follow jinja2: a for
// loop's body and a macro's body have their own variables (a `set` inside
// does not change the outside; namespaces are the way out), `if` has none.
// Every expression and statement evaluated counts a step; loops count
// iterations; nesting of evaluation and macro calls is bounded; the output
// and every string built are bounded in size.
#pragma once

#include <memory>
#include <string>

#include "engine/chat_template/ast.h"
#include "engine/chat_template/chat_template.h"

namespace engine::chat_template {

// Renders `body` with `variables` (a dict) over the globals. Throws Error.
std::string evaluate(const Body& body, const Value& variables, const Options& options);

}  // namespace engine::chat_template
