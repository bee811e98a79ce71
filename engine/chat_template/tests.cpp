// jinja2's tests (`x is defined`, `x is string`, ...), with their Python
// meanings: an undefined value is iterable and a sequence (jinja2's Undefined
// has __iter__, __len__ and __getitem__), a bool is a number but not an integer.
#include <cmath>

#include "engine/chat_template/builtins.h"

namespace engine::chat_template {

bool apply_test(const std::string& name, const Value& v, const CallArgs& args) {
  auto arg = [&](size_t i) -> const Value& {
    const Value* a = args.get(i, "");
    if (!a) throw ValueError("test '" + name + "' needs an argument");
    return *a;
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict() && !v.dict().is_namespace;
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.dict().is_namespace);
  if (name == "sequence") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.dict().is_namespace);
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "number") return v.is_number() || v.is_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "callable") return v.is_callable();
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equals(v, arg(0));
  if (name == "ne" || name == "!=") return !equals(v, arg(0));
  if (name == "lt" || name == "lessthan" || name == "<") return compare(v, arg(0)) < 0;
  if (name == "le" || name == "<=") return compare(v, arg(0)) <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(v, arg(0)) > 0;
  if (name == "ge" || name == ">=") return compare(v, arg(0)) >= 0;
  if (name == "in") {
    const Value& container = arg(0);
    if (container.is_string() && v.is_string()) return container.as_string().find(v.as_string()) != std::string::npos;
    for (const Value& item : iterate(container))
      if (equals(item, v)) return true;
    return false;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!v.is_int() && !v.is_bool()) throw ValueError("test '" + name + "' needs an integer, not " + type_name(v));
    int64_t d = name == "divisibleby" ? arg(0).as_int() : 2;
    if (d == 0) throw ValueError("integer modulo by zero");
    int64_t r = v.as_int() % d;
    return name == "odd" ? r != 0 : r == 0;
  }
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    bool has_cased = false;
    for (char c : v.as_string()) {
      if (name == "lower" ? (c >= 'A' && c <= 'Z') : (c >= 'a' && c <= 'z')) return false;
      has_cased |= (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }
    return has_cased;
  }
  throw ValueError("No test named '" + name + "'.");
}

}  // namespace engine::chat_template
