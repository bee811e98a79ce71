// The globals a template sees besides its variables: jinja2's range,
// namespace and dict, and the two functions Hugging Face adds,
// raise_exception(message) and strftime_now(format).
#include <ctime>
#include <memory>

#include "engine/chat_template/builtins.h"

namespace engine::chat_template {
namespace {

void add(ValueDict& globals, const std::string& name, std::function<Value(const CallArgs&)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = name;
  c->call = std::move(fn);
  globals.set(name, Value(std::move(c)));
}

int64_t int_arg(const Value& v) {
  if (!v.is_int() && !v.is_bool()) throw ValueError("'" + type_name(v) + "' object cannot be interpreted as an integer");
  return v.as_int();
}

std::tm local_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

void add_globals(ValueDict& globals, const Options& options) {
  Limits limits = options.limits;
  add(globals, "range", [limits](const CallArgs& a) {
    if (a.positional.empty() || a.positional.size() > 3) throw ValueError("range expected 1 to 3 arguments");
    int64_t start = 0, stop, step = 1;
    if (a.positional.size() == 1) {
      stop = int_arg(a.positional[0]);
    } else {
      start = int_arg(a.positional[0]);
      stop = int_arg(a.positional[1]);
      if (a.positional.size() == 3) step = int_arg(a.positional[2]);
    }
    if (step == 0) throw ValueError("range() arg 3 must not be zero");
    // Count before building, so range(10**12) is refused, not allocated.
    long double span = static_cast<long double>(stop) - static_cast<long double>(start);
    long double n = span / static_cast<long double>(step);
    if (n > static_cast<long double>(limits.max_loop_iterations))
      throw LimitError("range of over " + std::to_string(limits.max_loop_iterations) + " items exceeds max_loop_iterations");
    ValueList out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      out.emplace_back(i);
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    return Value(std::move(out));
  });
  add(globals, "namespace", [](const CallArgs& a) {
    auto ns = std::make_shared<ValueDict>();
    ns->is_namespace = true;
    for (const Value& v : a.positional)
      if (v.is_dict())
        for (const auto& [k, item] : v.dict().entries) ns->set_key(k, item);
    for (const auto& [k, v] : a.named) ns->set(k, v);
    return Value(std::move(ns));
  });
  add(globals, "dict", [](const CallArgs& a) {
    auto d = std::make_shared<ValueDict>();
    for (const Value& v : a.positional)
      if (v.is_dict())
        for (const auto& [k, item] : v.dict().entries) d->set_key(k, item);
    for (const auto& [k, v] : a.named) d->set(k, v);
    return Value(std::move(d));
  });
  add(globals, "raise_exception", [](const CallArgs& a) -> Value {
    throw Raised{a.positional.empty() ? std::string() : to_str(a.positional[0])};
  });
  auto now = options.now ? options.now : std::function<std::tm()>(local_now);
  add(globals, "strftime_now", [now](const CallArgs& a) {
    if (a.positional.empty() || !a.positional[0].is_string()) throw ValueError("strftime_now needs a format string");
    const std::string& format = a.positional[0].as_string();
    if (format.size() > 256) throw ValueError("strftime_now format longer than 256 bytes");
    std::tm tm = now();
    char buf[4096];
    // The format is the template's, as Python's strftime takes it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    size_t n = format.empty() ? 0 : std::strftime(buf, sizeof buf, format.c_str(), &tm);
#pragma GCC diagnostic pop
    return Value(std::string(buf, n));
  });
}

}  // namespace engine::chat_template
