// The syntax tree of a template: expressions and statements. One node struct
// for each, with a kind and the fields that kind uses, so the parser and the
// evaluator read as two switches over the same list.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat_template/error.h"
#include "engine/chat_template/value.h"

namespace engine::chat_template {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal,      // value
    name,         // name
    list,         // items
    tuple,        // items
    dict,         // items: key, value, key, value, ...
    attribute,    // a.name
    item,         // a[b]
    slice,        // a[b:c:d] (absent parts null)
    call,         // a(items..., named...)
    filter,       // a | name(items..., named...)
    test,         // a is [not] name(items...)
    unary,        // name (not, -, +) a
    binary,       // a name b: and or + - * / // % ** ~ == != < > <= >= in, "not in"
    conditional,  // a if b else c (c null: undefined)
    placeholder,  // the text of a {% filter %} block's body
  };
  Kind kind;
  Pos pos;
  int height = 1;  // of this subtree; the parser bounds it (evaluation and destruction recurse over it)
  Value value;
  std::string name;
  bool negated = false;  // `is not`
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> named;
  ExprPtr a, b, c, d;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    text,         // text
    output,       // {{ expr }}
    if_,          // expr, body, else_body (an elif is an if_ alone in else_body)
    for_,         // targets in expr [if condition] [recursive], body, else_body
    set,          // targets (or targets[0].attribute) = expr
    set_block,    // {% set targets[0] [| filter] %}body{% endset %}: expr is the filter or null
    macro,        // name(params) body
    filter_block, // {% filter expr %}body{% endfilter %}: expr applies to a placeholder
    scope,        // {% generation %}body{% endgeneration %}: renders its body
    break_,
    continue_,
  };
  Kind kind;
  Pos pos;
  std::string text;                 // text, macro name
  std::string attribute;            // set ns.attribute
  ExprPtr expr;
  ExprPtr condition;                // for ... if condition
  bool recursive = false;
  std::vector<std::string> targets;
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters and defaults
  Body body, else_body;
};

}  // namespace engine::chat_template
