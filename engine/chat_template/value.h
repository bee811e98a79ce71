// The values a chat template computes with, shaped like the Python objects
// jinja2 hands a template: None, bool, int, float, str (UTF-8, indexed by code
// point), list and tuple, dict (keys in insertion order, as JSON gives them),
// callables (built-ins and macros) and jinja2's Undefined. Lists and dicts are
// shared by reference as in Python; only a namespace() is ever mutated.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace engine::chat_template {

// A type or value error raised by an operation on values; the evaluator adds
// the template position.
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A sandbox bound was exceeded (the evaluator makes it Error(limit)).
struct LimitError : ValueError {
  using ValueError::ValueError;
};

class Value;
using ValueList = std::vector<Value>;

// Keys are values as in Python (JSON gives strings; a template's literal may
// use numbers: `{0: 0, 512: 128}`).
struct ValueDict {
  std::vector<std::pair<Value, Value>> entries;
  bool is_namespace = false;  // namespace(): attributes may be assigned

  const Value* find(std::string_view key) const;
  const Value* find_key(const Value& key) const;
  void set(const std::string& key, Value value);
  void set_key(const Value& key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;

  // The argument at `index` or named `name`, or nullptr when not given.
  const Value* get(size_t index, std::string_view name) const;
};

struct Callable {
  std::string name;
  std::function<Value(const CallArgs&)> call;
};

class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, floating, string, list, dict, callable };

  Value() = default;  // undefined
  static Value undefined(std::string hint) { Value v; v.str_ = std::move(hint); return v; }
  static Value none() { return with_kind(Kind::none); }
  Value(bool b) : kind_(Kind::boolean), int_(b) {}
  Value(int v) : kind_(Kind::integer), int_(v) {}
  Value(int64_t v) : kind_(Kind::integer), int_(v) {}
  Value(double v) : kind_(Kind::floating), float_(v) {}
  Value(std::string s) : kind_(Kind::string), str_(std::move(s)) {}
  Value(const char* s) : kind_(Kind::string), str_(s) {}
  Value(ValueList items, bool tuple = false)
      : kind_(Kind::list), tuple_(tuple), list_(std::make_shared<ValueList>(std::move(items))) {}
  Value(std::shared_ptr<ValueDict> dict) : kind_(Kind::dict), dict_(std::move(dict)) {}
  Value(std::shared_ptr<Callable> fn) : kind_(Kind::callable), fn_(std::move(fn)) {}
  static Value empty_dict() { return Value(std::make_shared<ValueDict>()); }
  // A string marked safe (the `safe` filter: markupsafe's Markup). `+` with a
  // plain string HTML-escapes the plain one, as Markup.__add__ does.
  static Value markup(std::string s) { Value v(std::move(s)); v.safe_ = true; return v; }
  bool is_markup() const { return safe_; }

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_int() const { return kind_ == Kind::integer; }
  bool is_float() const { return kind_ == Kind::floating; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_tuple() const { return kind_ == Kind::list && tuple_; }
  bool is_dict() const { return kind_ == Kind::dict; }
  bool is_callable() const { return kind_ == Kind::callable; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  double as_float() const { return is_int() || is_bool() ? static_cast<double>(int_) : float_; }
  const std::string& as_string() const { return str_; }  // also an undefined's hint
  ValueList& list() const { return *list_; }
  ValueDict& dict() const { return *dict_; }
  const std::shared_ptr<ValueDict>& dict_ptr() const { return dict_; }
  const Callable& callable() const { return *fn_; }

 private:
  static Value with_kind(Kind k) { Value v; v.kind_ = k; return v; }

  Kind kind_ = Kind::undefined;
  bool tuple_ = false;
  bool safe_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<Callable> fn_;
};

// Python's truth value (undefined is false).
bool truthy(const Value& v);
// Python's str() (undefined prints as nothing) and repr(). Throws LimitError
// when the text would exceed max_bytes (a list may hold one string many times).
std::string to_str(const Value& v, size_t max_bytes = SIZE_MAX);
std::string repr(const Value& v, size_t max_bytes = SIZE_MAX);
// Python's name of the value's type, for error messages ("str", "dict", ...).
std::string type_name(const Value& v);
// Python's == (numbers across int/float, lists and dicts deeply).
bool equals(const Value& a, const Value& b);
// Python's ordering (<0, 0, >0) for numbers, strings and lists; throws
// ValueError for values Python cannot order.
int compare(const Value& a, const Value& b);
// Python's repr of a float ("1.0", "0.1", "1e+16").
std::string float_repr(double v);

// markupsafe.escape: & < > ' " as HTML entities.
std::string html_escape(std::string_view s);

// UTF-8 strings indexed by code point, as Python's str is.
std::vector<std::string> utf8_chars(std::string_view s);
size_t utf8_length(std::string_view s);

}  // namespace engine::chat_template
