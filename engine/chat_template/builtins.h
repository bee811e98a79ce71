// What a template can call or look up besides its own macros: jinja2's
// filters (filters.cpp) and tests (tests.cpp), Python's methods of str, dict
// and list with attribute and item access (methods.cpp), and the globals
// Hugging Face provides (globals.cpp). Errors are ValueError (the evaluator
// adds the position); raise_exception throws Raised.
#pragma once

#include <string>

#include "engine/chat_template/chat_template.h"
#include "engine/chat_template/value.h"

namespace engine::chat_template {

// raise_exception(message) was called.
struct Raised {
  std::string message;
};

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args, const Limits& limits);
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);

// obj.name: a dict's method or entry, a str's or list's method, a namespace's
// attribute; undefined (with jinja2's message) when missing. Throws for an
// undefined obj, as jinja2 does.
Value get_attribute(const Value& obj, const std::string& name, const Limits& limits);
// obj[key]: an entry, an element (negative indexes count from the end), or
// for a string key the attribute; undefined when missing.
Value get_item(const Value& obj, const Value& key, const Limits& limits);
// obj[start:stop:step] of a str, list or tuple (null parts: Value()).
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Python's iteration: a list's items, a dict's keys, a str's characters; an
// undefined value yields nothing. Throws for what cannot be iterated.
ValueList iterate(const Value& v);

// Throws LimitError naming the bound when a string or list built exceeds it.
void check_string_size(size_t bytes, const Limits& limits);
void check_list_size(size_t items, const Limits& limits);

// range, namespace, dict, raise_exception, strftime_now.
void add_globals(ValueDict& globals, const Options& options);

}  // namespace engine::chat_template
