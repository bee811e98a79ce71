// jinja2's filters that chat templates use, with jinja2's semantics
// (including its quirks: `indent` drops a trailing newline, `default` only
// replaces undefined unless its second argument is true, `sort`, `unique`
// and `dictsort` ignore case by default).
#include <algorithm>
#include <charconv>
#include <cmath>

#include "engine/chat_template/builtins.h"
#include "engine/chat_template/json.h"
#include "engine/chat_template/str_util.h"

namespace engine::chat_template {
namespace {

const Value* arg(const CallArgs& args, size_t i, const char* name) {
  const Value* v = args.get(i, name);
  return v && !v->is_undefined() ? v : nullptr;
}
bool arg_bool(const CallArgs& args, size_t i, const char* name, bool fallback) {
  const Value* v = arg(args, i, name);
  return v ? truthy(*v) : fallback;
}

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value lookup_path(const Value& v, const std::string& path, const Limits& limits) {
  Value cur = v;
  size_t i = 0;
  for (;;) {
    size_t dot = path.find('.', i);
    std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    int64_t index = 0;
    auto r = std::from_chars(part.data(), part.data() + part.size(), index);
    Value key = r.ec == std::errc() && r.ptr == part.data() + part.size() ? Value(index) : Value(part);
    cur = cur.is_undefined() ? cur : get_item(cur, key, limits);
    if (dot == std::string::npos) return cur;
    i = dot + 1;
  }
}

Value attribute_or_self(const Value& v, const CallArgs& args, size_t index, const Limits& limits) {
  const Value* attr = arg(args, index, "attribute");
  return attr ? lookup_path(v, to_str(*attr), limits) : v;
}

// Sort key comparison; strings compared lower-cased unless case_sensitive.
int sort_compare(const Value& a, const Value& b, bool case_sensitive) {
  if (!case_sensitive && a.is_string() && b.is_string()) return compare(Value(lower(a.as_string())), Value(lower(b.as_string())));
  return compare(a, b);
}

// select/reject and selectattr/rejectattr.
Value select(const Value& input, const CallArgs& args, bool by_attribute, bool keep, const Limits& limits) {
  if (!truthy(input)) return Value(ValueList{});  // jinja2: `if seq:` before iterating
  size_t first_test_arg = by_attribute ? 1 : 0;
  const Value* test = arg(args, first_test_arg, "");
  CallArgs test_args;
  for (size_t i = first_test_arg + 1; i < args.positional.size(); ++i) test_args.positional.push_back(args.positional[i]);
  ValueList out;
  for (const Value& item : iterate(input)) {
    Value v = item;
    if (by_attribute) {
      const Value* attr = arg(args, 0, "");
      if (!attr) throw ValueError("selectattr needs an attribute name");
      v = lookup_path(item, to_str(*attr), limits);
    }
    bool pass = test ? apply_test(to_str(*test), v, test_args) : truthy(v);
    if (pass == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value indent(const Value& input, const CallArgs& args, const Limits& limits) {
  const Value* width = arg(args, 0, "width");
  std::string pad = !width ? "    " : width->is_string() ? width->as_string() : std::string();
  if (width && !width->is_string()) {
    if (!width->is_int() || width->as_int() < 0 || width->as_int() > 1000) throw ValueError("indent width must be 0..1000");
    pad.assign(static_cast<size_t>(width->as_int()), ' ');
  }
  bool first = arg_bool(args, 1, "first", false), blank = arg_bool(args, 2, "blank", false);
  std::string s = to_str(input) + "\n";  // jinja2 appends a newline before splitlines
  auto lines = splitlines(s);
  check_string_size(s.size() + lines.size() * pad.size(), limits);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
  }
  return Value(first ? pad + out : out);
}

Value to_int(const Value& v, const CallArgs& args) {
  const Value* fallback = arg(args, 0, "default");
  Value def = fallback ? *fallback : Value(0);
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) return std::isfinite(v.as_float()) && std::fabs(v.as_float()) < 9.2e18 ? Value(static_cast<int64_t>(v.as_float())) : def;
  if (!v.is_string()) return def;
  std::string s = strip(v.as_string(), 3);
  int64_t i = 0;
  auto r = std::from_chars(s.data() + (s.size() && s[0] == '+'), s.data() + s.size(), i);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return Value(i);
  double d = 0;
  auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
  if (rd.ec == std::errc() && rd.ptr == s.data() + s.size() && !s.empty() && std::fabs(d) < 9.2e18)
    return Value(static_cast<int64_t>(d));
  return def;
}

Value min_max(const Value& input, const CallArgs& args, bool want_max, const Limits& limits) {
  bool case_sensitive = arg_bool(args, 0, "case_sensitive", false);
  ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    int c = sort_compare(attribute_or_self(items[i], args, 1, limits), attribute_or_self(items[best], args, 1, limits), case_sensitive);
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}

}  // namespace

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args, const Limits& limits) {
  if (name == "tojson") {
    JsonStyle style;
    if (const Value* indent = arg(args, 0, "indent"); indent && !indent->is_none()) {
      if (!indent->is_int() || indent->as_int() > 1000) throw ValueError("tojson indent must be an integer up to 1000");
      style.indent = static_cast<int>(indent->as_int());
    }
    style.sort_keys = arg_bool(args, 99, "sort_keys", false);
    if (const Value* seps = arg(args, 99, "separators"); seps && seps->is_list() && seps->list().size() == 2) {
      style.item_separator = to_str(seps->list()[0]);
      style.key_separator = to_str(seps->list()[1]);
    }
    style.max_bytes = limits.max_output_bytes;
    std::string out = to_json(input, style);
    check_string_size(out.size(), limits);
    return Value(std::move(out));
  }
  if (name == "length" || name == "count") {
    if (input.is_string()) return Value(static_cast<int64_t>(utf8_length(input.as_string())));
    if (input.is_list()) return Value(static_cast<int64_t>(input.list().size()));
    if (input.is_dict()) return Value(static_cast<int64_t>(input.dict().entries.size()));
    if (input.is_undefined()) return Value(0);
    throw ValueError("object of type '" + type_name(input) + "' has no len()");
  }
  if (name == "trim") {
    const Value* chars = arg(args, 0, "chars");
    return Value(chars ? strip(to_str(input), to_str(*chars), 3) : strip(to_str(input), 3));
  }
  if (name == "string") return Value(to_str(input, limits.max_output_bytes));
  if (name == "safe") return input.is_string() ? Value::markup(input.as_string()) : input;
  if (name == "default" || name == "d") {
    const Value* fallback = arg(args, 0, "default_value");
    bool boolean = arg_bool(args, 1, "boolean", false);
    if (input.is_undefined() || (boolean && !truthy(input))) return fallback ? *fallback : Value("");
    return input;
  }
  if (name == "lower") return Value(lower(to_str(input)));
  if (name == "upper") return Value(upper(to_str(input)));
  if (name == "title") return Value(title(to_str(input)));
  if (name == "capitalize") return Value(capitalize(to_str(input)));
  if (name == "replace") {
    const Value* from = arg(args, 0, "old");
    const Value* to = arg(args, 1, "new");
    const Value* count = arg(args, 2, "count");
    if (!from || !to) throw ValueError("replace needs two arguments");
    return Value(replace(to_str(input), to_str(*from), to_str(*to), count && count->is_int() ? count->as_int() : -1,
                         limits.max_output_bytes));
  }
  if (name == "join") {
    const Value* sep = arg(args, 0, "d");
    std::string s = sep ? to_str(*sep) : "", out;
    bool first = true;
    for (const Value& item : iterate(input)) {
      out += (first ? "" : s) + to_str(attribute_or_self(item, args, 1, limits), limits.max_output_bytes);
      first = false;
      check_string_size(out.size(), limits);
    }
    return Value(std::move(out));
  }
  if (name == "items") {
    if (input.is_undefined()) return Value(ValueList{});
    if (!input.is_dict()) throw ValueError("can only get item pairs from a mapping.");
    ValueList out;
    for (const auto& [k, v] : input.dict().entries) out.emplace_back(ValueList{k, v}, true);
    return Value(std::move(out));
  }
  if (name == "list") return Value(iterate(input));
  if (name == "first" || name == "last") {
    ValueList items = iterate(input);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (input.is_string()) return get_slice(input, Value(), Value(), Value(-1));
    ValueList items = iterate(input);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "dictsort") {
    if (!input.is_dict()) throw ValueError("You can only sort by either \"key\" or \"value\"");
    bool case_sensitive = arg_bool(args, 0, "case_sensitive", false);
    bool by_value = arg(args, 1, "by") && to_str(*arg(args, 1, "by")) == "value";
    bool reverse = arg_bool(args, 2, "reverse", false);
    ValueList pairs;
    for (const auto& [k, v] : input.dict().entries) pairs.emplace_back(ValueList{k, v}, true);
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
      int c = sort_compare(a.list()[by_value], b.list()[by_value], case_sensitive);
      return reverse ? c > 0 : c < 0;
    });
    return Value(std::move(pairs));
  }
  if (name == "sort") {
    bool reverse = arg_bool(args, 0, "reverse", false), case_sensitive = arg_bool(args, 1, "case_sensitive", false);
    ValueList items = iterate(input);
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
      int c = sort_compare(attribute_or_self(a, args, 2, limits), attribute_or_self(b, args, 2, limits), case_sensitive);
      return reverse ? c > 0 : c < 0;
    });
    return Value(std::move(items));
  }
  if (name == "unique") {
    bool case_sensitive = arg_bool(args, 0, "case_sensitive", false);
    ValueList out, seen;
    for (const Value& item : iterate(input)) {
      Value key = attribute_or_self(item, args, 1, limits);
      if (!case_sensitive && key.is_string()) key = Value(lower(key.as_string()));
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
        seen.push_back(key);
        out.push_back(item);
      }
    }
    return Value(std::move(out));
  }
  if (name == "min" || name == "max") return min_max(input, args, name == "max", limits);
  if (name == "select" || name == "reject") return select(input, args, false, name == "select", limits);
  if (name == "selectattr" || name == "rejectattr") return select(input, args, true, name == "selectattr", limits);
  if (name == "map") {
    ValueList out;
    if (!truthy(input)) return Value(std::move(out));  // jinja2: `if value:` before iterating
    const Value* attribute = arg(args, 99, "attribute");
    for (const Value& item : iterate(input)) {
      if (attribute) {
        Value v = lookup_path(item, to_str(*attribute), limits);
        const Value* fallback = arg(args, 99, "default");
        out.push_back(v.is_undefined() && fallback ? *fallback : v);
      } else {
        if (args.positional.empty()) throw ValueError("map needs a filter name or attribute=");
        CallArgs rest;
        rest.positional.assign(args.positional.begin() + 1, args.positional.end());
        out.push_back(apply_filter(to_str(args.positional[0]), item, rest, limits));
      }
    }
    return Value(std::move(out));
  }
  if (name == "indent") return indent(input, args, limits);
  if (name == "int") return to_int(input, args);
  if (name == "float") {
    if (input.is_number() || input.is_bool()) return Value(input.as_float());
    double d = 0;
    std::string s = strip(to_str(input), 3);
    auto r = std::from_chars(s.data(), s.data() + s.size(), d);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return Value(d);
    const Value* fallback = arg(args, 0, "default");
    return fallback ? *fallback : Value(0.0);
  }
  if (name == "abs") {
    if (input.is_int()) return input.as_int() == INT64_MIN ? Value(-static_cast<double>(INT64_MIN)) : Value(std::abs(input.as_int()));
    if (input.is_float()) return Value(std::fabs(input.as_float()));
    throw ValueError("bad operand type for abs(): '" + type_name(input) + "'");
  }
  if (name == "round") {
    const Value* precision = arg(args, 0, "precision");
    int64_t p = precision && precision->is_int() ? std::clamp<int64_t>(precision->as_int(), -20, 20) : 0;
    double scale = std::pow(10.0, static_cast<double>(p));
    return Value(std::round(input.as_float() * scale) / scale);
  }
  if (name == "sum") {
    Value total = arg(args, 1, "start") ? *arg(args, 1, "start") : Value(0);
    for (const Value& item : iterate(input)) {
      Value v = attribute_or_self(item, args, 0, limits);
      if (!(v.is_number() || v.is_bool()) || !(total.is_number() || total.is_bool()))
        throw ValueError("sum needs numbers, not " + type_name(v));
      if (v.is_float() || total.is_float()) total = Value(total.as_float() + v.as_float());
      else total = Value(static_cast<int64_t>(static_cast<uint64_t>(total.as_int()) + static_cast<uint64_t>(v.as_int())));
    }
    return total;
  }
  if (name == "wordcount") return Value(static_cast<int64_t>(split(to_str(input), nullptr, -1, false).size()));
  throw ValueError("No filter named '" + name + "'.");
}

}  // namespace engine::chat_template
