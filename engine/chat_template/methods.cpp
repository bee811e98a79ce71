// Attribute and item access, slicing, iteration, and the methods of str,
// dict and list a template may call. Like jinja2's ImmutableSandboxedEnvironment
// (which Hugging Face uses), methods that would change a list or dict are
// refused.
#include <algorithm>
#include <cctype>
#include <memory>

#include "engine/chat_template/builtins.h"
#include "engine/chat_template/str_util.h"

namespace engine::chat_template {
namespace {

Value method(std::string name, std::function<Value(const CallArgs&)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  c->call = std::move(fn);
  return Value(std::move(c));
}

std::string arg_string(const CallArgs& args, size_t i, const char* name, const std::string& fallback) {
  const Value* v = args.get(i, name);
  if (!v || v->is_none()) return fallback;
  if (!v->is_string()) throw ValueError(std::string("argument '") + name + "' must be str, not " + type_name(*v));
  return v->as_string();
}

// startswith/endswith accept a str or a tuple of them.
bool affix_matches(const std::string& s, const Value& affix, bool prefix) {
  if (affix.is_list()) {
    for (const Value& a : affix.list())
      if (affix_matches(s, a, prefix)) return true;
    return false;
  }
  if (!affix.is_string())
    throw ValueError(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str, not " +
                     type_name(affix));
  const std::string& a = affix.as_string();
  if (a.size() > s.size()) return false;
  return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
}

Value string_method(const std::string& s, const std::string& name, const Limits& limits) {
  auto strip_with = [s](int sides) {
    return [s, sides](const CallArgs& a) {
      const Value* chars = a.get(0, "chars");
      return Value(chars && chars->is_string() ? strip(s, chars->as_string(), sides) : strip(s, sides));
    };
  };
  if (name == "strip") return method(name, strip_with(3));
  if (name == "lstrip") return method(name, strip_with(1));
  if (name == "rstrip") return method(name, strip_with(2));
  if (name == "upper") return method(name, [s](const CallArgs&) { return Value(upper(s)); });
  if (name == "lower") return method(name, [s](const CallArgs&) { return Value(lower(s)); });
  if (name == "title") return method(name, [s](const CallArgs&) { return Value(title(s)); });
  if (name == "capitalize") return method(name, [s](const CallArgs&) { return Value(capitalize(s)); });
  if (name == "split" || name == "rsplit") {
    bool from_right = name == "rsplit";
    return method(name, [s, from_right](const CallArgs& a) {
      const Value* sep = a.get(0, "sep");
      const Value* max = a.get(1, "maxsplit");
      int64_t maxsplit = max && max->is_int() ? max->as_int() : -1;
      ValueList out;
      for (auto& part : split(s, sep && sep->is_string() ? &sep->as_string() : nullptr, maxsplit, from_right))
        out.emplace_back(std::move(part));
      return Value(std::move(out));
    });
  }
  if (name == "startswith" || name == "endswith") {
    bool prefix = name == "startswith";
    return method(name, [s, prefix](const CallArgs& a) {
      const Value* affix = a.get(0, "prefix");
      if (!affix) throw ValueError("startswith/endswith takes at least 1 argument");
      return Value(affix_matches(s, *affix, prefix));
    });
  }
  if (name == "replace")
    return method(name, [s, max = limits.max_output_bytes](const CallArgs& a) {
      const Value* count = a.get(2, "count");
      return Value(replace(s, arg_string(a, 0, "old", ""), arg_string(a, 1, "new", ""),
                           count && count->is_int() ? count->as_int() : -1, max));
    });
  if (name == "find" || name == "count")
    return method(name, [s, name](const CallArgs& a) {
      std::string needle = arg_string(a, 0, "sub", "");
      if (name == "count") return Value(static_cast<int64_t>(count(s, needle)));
      size_t at = s.find(needle);
      return Value(at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(utf8_length(s.substr(0, at))));
    });
  if (name == "join")
    return method(name, [s](const CallArgs& a) {
      const Value* items = a.get(0, "iterable");
      std::string out;
      bool first = true;
      for (const Value& v : items ? iterate(*items) : ValueList{}) {
        if (!v.is_string()) throw ValueError("sequence item: expected str instance, " + type_name(v) + " found");
        out += (first ? "" : s) + v.as_string();
        first = false;
      }
      return Value(std::move(out));
    });
  return Value::undefined("'str object' has no attribute '" + name + "'");
}

bool is_mutating(const std::string& name, bool dict) {
  static const char* const list_names[] = {"append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear"};
  static const char* const dict_names[] = {"pop", "popitem", "update", "setdefault", "clear"};
  if (dict) return std::find(std::begin(dict_names), std::end(dict_names), name) != std::end(dict_names);
  return std::find(std::begin(list_names), std::end(list_names), name) != std::end(list_names);
}

Value dict_method(const Value& obj, const std::string& name) {
  if (name == "items")
    return method(name, [obj](const CallArgs&) {
      ValueList out;
      for (const auto& [k, v] : obj.dict().entries) out.emplace_back(ValueList{k, v}, true);
      return Value(std::move(out));
    });
  if (name == "keys")
    return method(name, [obj](const CallArgs&) {
      ValueList out;
      for (const auto& e : obj.dict().entries) out.emplace_back(e.first);
      return Value(std::move(out));
    });
  if (name == "values")
    return method(name, [obj](const CallArgs&) {
      ValueList out;
      for (const auto& e : obj.dict().entries) out.push_back(e.second);
      return Value(std::move(out));
    });
  if (name == "get")
    return method(name, [obj](const CallArgs& a) {
      const Value* key = a.get(0, "key");
      const Value* fallback = a.get(1, "default");
      const Value* found = key ? obj.dict().find_key(*key) : nullptr;
      return found ? *found : fallback ? *fallback : Value::none();
    });
  if (is_mutating(name, true))
    return method(name, [name](const CallArgs&) -> Value {
      throw ValueError("access to attribute '" + name + "' of 'dict' object is unsafe.");
    });
  return Value();
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name, const Limits& limits) {
  switch (obj.kind()) {
    case Value::Kind::undefined: throw ValueError(obj.as_string().empty() ? "undefined value" : obj.as_string());
    case Value::Kind::string: return string_method(obj.as_string(), name, limits);
    case Value::Kind::dict: {
      if (obj.dict().is_namespace) {
        const Value* v = obj.dict().find(name);
        return v ? *v : Value::undefined("'Namespace object' has no attribute '" + name + "'");
      }
      Value m = dict_method(obj, name);
      if (!m.is_undefined()) return m;
      const Value* v = obj.dict().find(name);
      return v ? *v : Value::undefined("'dict object' has no attribute '" + name + "'");
    }
    case Value::Kind::list:
      if (is_mutating(name, false))
        return method(name, [name, tuple = obj.is_tuple()](const CallArgs&) -> Value {
          throw ValueError("access to attribute '" + name + "' of '" + (tuple ? "tuple" : "list") + "' object is unsafe.");
        });
      return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
    case Value::Kind::none: return Value::undefined("'None' has no attribute '" + name + "'");
    default: return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
  }
}

Value get_item(const Value& obj, const Value& key, const Limits& limits) {
  if (obj.is_undefined()) throw ValueError(obj.as_string().empty() ? "undefined value" : obj.as_string());
  if (obj.is_dict()) {
    const Value* v = obj.dict().find_key(key);
    if (v) return *v;
  }
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_list()) {
      auto n = static_cast<int64_t>(obj.list().size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return obj.list()[static_cast<size_t>(i)];
      return Value::undefined(type_name(obj) + " object has no element " + std::to_string(key.as_int()));
    }
    auto chars = utf8_chars(obj.as_string());
    auto n = static_cast<int64_t>(chars.size());
    if (i < 0) i += n;
    if (i >= 0 && i < n) return Value(chars[static_cast<size_t>(i)]);
    return Value::undefined("str object has no element " + std::to_string(key.as_int()));
  }
  if (key.is_string()) return get_attribute(obj, key.as_string(), limits);
  return Value::undefined("'" + type_name(obj) + " object' has no attribute " + repr(key));
}

Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  auto bound = [](const Value& v, const char* what) -> const Value* {
    if (v.is_undefined() || v.is_none()) return nullptr;
    if (!v.is_int()) throw ValueError(std::string("slice ") + what + " must be an integer");
    return &v;
  };
  const Value* b = bound(start, "start");
  const Value* e = bound(stop, "stop");
  const Value* s = bound(step, "step");
  int64_t st = s ? s->as_int() : 1;
  if (st == 0) throw ValueError("slice step cannot be zero");
  std::vector<std::string> chars;
  if (obj.is_string()) chars = utf8_chars(obj.as_string());
  else if (!obj.is_list()) throw ValueError("'" + type_name(obj) + "' object is not subscriptable");
  auto n = static_cast<int64_t>(obj.is_string() ? chars.size() : obj.list().size());
  // Python's slice.indices().
  auto clamp = [&](const Value* v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = v->as_int();
    if (i < 0) i = std::max<int64_t>(i + n, st < 0 ? -1 : 0);
    return std::min<int64_t>(i, st < 0 ? n - 1 : n);
  };
  int64_t i = clamp(b, st < 0 ? n - 1 : 0), end = clamp(e, st < 0 ? -1 : n);
  std::string str;
  ValueList list;
  for (; st > 0 ? i < end : i > end; i += st) {
    if (obj.is_string()) str += chars[static_cast<size_t>(i)];
    else list.push_back(obj.list()[static_cast<size_t>(i)]);
  }
  if (obj.is_string()) return Value(std::move(str));
  return Value(std::move(list), obj.is_tuple());
}

ValueList iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return {};
    case Value::Kind::list: return v.list();
    case Value::Kind::dict: {
      if (v.dict().is_namespace) break;
      ValueList keys;
      for (const auto& e : v.dict().entries) keys.emplace_back(e.first);
      return keys;
    }
    case Value::Kind::string: {
      ValueList out;
      for (auto& c : utf8_chars(v.as_string())) out.emplace_back(std::move(c));
      return out;
    }
    default: break;
  }
  throw ValueError("'" + type_name(v) + "' object is not iterable");
}

void check_string_size(size_t bytes, const Limits& limits) {
  if (bytes > limits.max_output_bytes)
    throw LimitError("a string of " + std::to_string(bytes) + " bytes exceeds max_output_bytes (" +
                     std::to_string(limits.max_output_bytes) + ")");
}

void check_list_size(size_t items, const Limits& limits) {
  if (static_cast<int64_t>(items) > limits.max_loop_iterations)
    throw LimitError("a list of " + std::to_string(items) + " items exceeds max_loop_iterations (" +
                     std::to_string(limits.max_loop_iterations) + ")");
}

}  // namespace engine::chat_template
