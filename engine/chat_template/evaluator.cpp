#include "engine/chat_template/evaluator.h"

#include <cmath>
#include <unordered_map>

#include "engine/chat_template/builtins.h"

namespace engine::chat_template {
namespace {

// Variables of one level: the template's top level, a for loop, a macro call.
struct Scope {
  std::unordered_map<std::string, Value> vars;
  const Scope* parent = nullptr;
};

enum class Flow { normal, break_, continue_ };

class Evaluator {
 public:
  explicit Evaluator(const Options& options) : limits_(options.limits) {
    add_globals(builtins_.vars_dict, options);
    for (auto& [name, value] : builtins_.vars_dict.entries) builtins_.scope.vars[name.as_string()] = value;
    track_namespaces();
    top_.parent = &builtins_.scope;
  }

  ~Evaluator() {
    // A namespace may hold itself (`set ns.me = ns`); empty them all so no
    // reference cycle outlives the render.
    for (auto& ns : namespaces_) ns->entries.clear();
  }

  std::string run(const Body& body, const Value& variables) {
    if (variables.is_dict())
      for (const auto& [name, value] : variables.dict().entries) top_.vars[to_str(name)] = value;
    std::string out;
    out_ = &out;
    exec_body(body, top_);
    return out;
  }

 private:
  struct Builtins {
    ValueDict vars_dict;
    Scope scope;
  };

  // namespace() objects are recorded, to be emptied at the end.
  void track_namespaces() {
    Value& ns = builtins_.scope.vars["namespace"];
    auto inner = ns.callable().call;
    auto c = std::make_shared<Callable>();
    c->name = "namespace";
    c->call = [this, inner](const CallArgs& a) {
      Value v = inner(a);
      namespaces_.push_back(v.dict_ptr());
      return v;
    };
    ns = Value(std::move(c));
  }

  struct DepthGuard {
    Evaluator& e;
    DepthGuard(Evaluator& ev, const Pos& pos) : e(ev) {
      if (++e.depth_ > e.limits_.max_eval_depth)
        fail(Error::Kind::limit, pos, "evaluation nests deeper than max_eval_depth (" +
                                          std::to_string(e.limits_.max_eval_depth) + ")");
      e.charge(1, pos);
    }
    ~DepthGuard() { --e.depth_; }
  };

  void write(const std::string& s, const Pos& pos) {
    if (out_->size() + s.size() > limits_.max_output_bytes)
      fail(Error::Kind::limit, pos, "output exceeds max_output_bytes (" + std::to_string(limits_.max_output_bytes) + ")");
    *out_ += s;
  }

  // Runs `fn`, turning a ValueError into an Error at `pos`.
  template <typename F>
  auto at(const Pos& pos, F&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const LimitError& e) {
      fail(Error::Kind::limit, pos, e.what());
    } catch (const ValueError& e) {
      fail(Error::Kind::runtime, pos, e.what());
    } catch (const Raised& r) {
      fail(Error::Kind::raised, pos, r.message);
    }
  }

  // --- statements ---

  Flow exec_body(const Body& body, Scope& scope) {
    for (const auto& stmt : body) {
      Flow flow = exec(*stmt, scope);
      if (flow != Flow::normal) return flow;
    }
    return Flow::normal;
  }

  std::string capture(const Body& body, Scope& scope) {
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
      exec_body(body, scope);
    } catch (...) {
      out_ = saved;
      throw;
    }
    out_ = saved;
    return buffer;
  }

  Flow exec(const Stmt& s, Scope& scope) {
    DepthGuard guard(*this, s.pos);
    switch (s.kind) {
      case Stmt::Kind::text: write(s.text, s.pos); return Flow::normal;
      case Stmt::Kind::output: {
        Value v = eval(*s.expr, scope);
        write(at(s.pos, [&] { return to_str(v, limits_.max_output_bytes); }), s.pos);
        return Flow::normal;
      }
      case Stmt::Kind::if_:
        return exec_body(truthy(eval(*s.expr, scope)) ? s.body : s.else_body, scope);
      case Stmt::Kind::for_: exec_for(s, scope); return Flow::normal;
      case Stmt::Kind::set: exec_set(s, scope); return Flow::normal;
      case Stmt::Kind::set_block: {
        Value v(capture(s.body, scope));
        scope.vars[s.targets[0]] = s.expr ? with_placeholder(v, *s.expr, scope) : v;
        return Flow::normal;
      }
      case Stmt::Kind::macro: scope.vars[s.text] = make_macro(s); return Flow::normal;
      case Stmt::Kind::filter_block: {
        Value v = with_placeholder(Value(capture(s.body, scope)), *s.expr, scope);
        write(at(s.pos, [&] { return to_str(v, limits_.max_output_bytes); }), s.pos);
        return Flow::normal;
      }
      case Stmt::Kind::scope: {
        Scope inner{{}, &scope};
        return exec_body(s.body, inner);
      }
      case Stmt::Kind::break_: return Flow::break_;
      case Stmt::Kind::continue_: return Flow::continue_;
    }
    return Flow::normal;
  }

  Value with_placeholder(Value input, const Expr& filters, Scope& scope) {
    Value saved = std::move(placeholder_);
    placeholder_ = std::move(input);
    Value out = eval(filters, scope);
    placeholder_ = std::move(saved);
    return out;
  }

  void assign(Scope& scope, const std::vector<std::string>& targets, const Value& v, const Pos& pos) {
    if (targets.size() == 1) { scope.vars[targets[0]] = v; return; }
    ValueList items = at(pos, [&] { return iterate(v); });
    if (items.size() != targets.size())
      fail(Error::Kind::runtime, pos, "cannot unpack " + std::to_string(items.size()) + " values into " +
                                          std::to_string(targets.size()) + " names");
    for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = items[i];
  }

  void exec_set(const Stmt& s, Scope& scope) {
    Value v = eval(*s.expr, scope);
    if (s.attribute.empty()) { assign(scope, s.targets, v, s.pos); return; }
    Value target = lookup(s.targets[0], scope);
    if (!target.is_dict() || !target.dict().is_namespace)
      fail(Error::Kind::runtime, s.pos, "cannot assign attribute on non-namespace object");
    target.dict().set(s.attribute, std::move(v));
  }

  void exec_for(const Stmt& s, Scope& scope) {
    if (s.recursive) fail(Error::Kind::syntax, s.pos, "recursive for loops are not supported");
    Value iterable = eval(*s.expr, scope);
    ValueList items = at(s.pos, [&] { return iterate(iterable); });
    Scope inner{{}, &scope};
    if (s.condition) {  // the filter sees the loop variables, not `loop`
      ValueList kept;
      for (const Value& item : items) {
        count_iteration(s.pos);
        assign(inner, s.targets, item, s.pos);
        if (truthy(eval(*s.condition, inner))) kept.push_back(item);
      }
      items = std::move(kept);
    }
    auto n = static_cast<int64_t>(items.size());
    // One `loop` object, advanced in place each iteration as jinja2's
    // LoopContext is.
    auto loop = std::make_shared<ValueDict>();
    auto index = std::make_shared<int64_t>(0);
    auto cycle = std::make_shared<Callable>();
    cycle->name = "cycle";
    cycle->call = [index](const CallArgs& a) -> Value {
      if (a.positional.empty()) throw ValueError("no items for cycling given");
      return a.positional[static_cast<size_t>(*index) % a.positional.size()];
    };
    for (const char* key : {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0",
                            "previtem", "nextitem", "cycle"})
      loop->entries.emplace_back(Value(key), Value());
    auto& e = loop->entries;
    e[6].second = Value(n);
    e[7].second = Value(1);
    e[8].second = Value(0);
    e[11].second = Value(std::move(cycle));
    inner.vars["loop"] = Value(loop);
    for (int64_t i = 0; i < n; ++i) {
      count_iteration(s.pos);
      assign(inner, s.targets, items[static_cast<size_t>(i)], s.pos);
      *index = i;
      e[0].second = Value(i + 1);
      e[1].second = Value(i);
      e[2].second = Value(n - i);
      e[3].second = Value(n - i - 1);
      e[4].second = Value(i == 0);
      e[5].second = Value(i == n - 1);
      e[9].second = i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
      e[10].second = i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
      if (exec_body(s.body, inner) == Flow::break_) break;
      inner.vars["loop"] = Value(loop);  // the body may have set a `loop` of its own
    }
    if (n == 0) exec_body(s.else_body, inner);
  }

  void count_iteration(const Pos& pos) {
    if (++iterations_ > limits_.max_loop_iterations)
      fail(Error::Kind::limit, pos, "more than max_loop_iterations (" + std::to_string(limits_.max_loop_iterations) +
                                        ") loop iterations");
  }

  Value make_macro(const Stmt& m) {
    auto c = std::make_shared<Callable>();
    c->name = m.text;
    const Stmt* macro = &m;
    c->call = [this, macro](const CallArgs& a) { return call_macro(*macro, a); };
    return Value(std::move(c));
  }

  Value call_macro(const Stmt& m, const CallArgs& args) {
    if (args.positional.size() > m.params.size())
      throw ValueError("macro '" + m.text + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)");
    for (const auto& [name, v] : args.named) {
      bool known = false;
      for (const auto& p : m.params) known |= p.first == name;
      if (!known) throw ValueError("macro '" + m.text + "' takes no keyword argument '" + name + "'");
    }
    DepthGuard guard(*this, m.pos);
    Scope scope{{}, &top_};  // a macro sees the template's top level, not its caller's variables
    for (size_t i = 0; i < m.params.size(); ++i) {
      const auto& [name, def] = m.params[i];
      const Value* given = args.get(i, name);
      if (given) scope.vars[name] = *given;
      else scope.vars[name] = def ? eval(*def, scope) : Value::undefined("'" + name + "' is undefined");
    }
    return Value(capture(m.body, scope));
  }

  // --- expressions ---

  Value lookup(const std::string& name, const Scope& scope) const {
    for (const Scope* s = &scope; s; s = s->parent) {
      auto it = s->vars.find(name);
      if (it != s->vars.end()) return it->second;
    }
    return Value::undefined("'" + name + "' is undefined");
  }

  Value eval(const Expr& e, Scope& scope) {
    DepthGuard guard(*this, e.pos);
    Value v = eval_kind(e, scope);
    if (v.is_string()) at(e.pos, [&] { check_string_size(v.as_string().size(), limits_); });
    // A list a call, filter or operator built costs a step per item, so the
    // step bound also bounds the memory lists can take (range(10**6) kept ten
    // times over is ten million steps).
    if (v.is_list() && (e.kind == Expr::Kind::call || e.kind == Expr::Kind::filter || e.kind == Expr::Kind::binary))
      charge(static_cast<int64_t>(v.list().size()), e.pos);
    return v;
  }

  void charge(int64_t steps, const Pos& pos) {
    steps_ += steps;
    if (steps_ > limits_.max_steps)
      fail(Error::Kind::limit, pos, "more than max_steps (" + std::to_string(limits_.max_steps) + ") evaluation steps");
  }

  CallArgs eval_args(const Expr& e, Scope& scope) {
    CallArgs args;
    for (const auto& item : e.items) args.positional.push_back(eval(*item, scope));
    for (const auto& [name, item] : e.named) args.named.emplace_back(name, eval(*item, scope));
    return args;
  }

  Value eval_kind(const Expr& e, Scope& scope) {
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup(e.name, scope);
      case Expr::Kind::placeholder: return placeholder_;
      case Expr::Kind::list: case Expr::Kind::tuple: {
        ValueList items;
        for (const auto& item : e.items) items.push_back(eval(*item, scope));
        return Value(std::move(items), e.kind == Expr::Kind::tuple);
      }
      case Expr::Kind::dict: {
        auto d = std::make_shared<ValueDict>();
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          Value key = eval(*e.items[i], scope);
          if (key.is_list() || key.is_dict() || key.is_undefined())
            fail(Error::Kind::runtime, e.items[i]->pos, "unhashable dict key of type '" + type_name(key) + "'");
          d->set_key(key, eval(*e.items[i + 1], scope));
        }
        return Value(std::move(d));
      }
      case Expr::Kind::attribute: {
        Value obj = eval(*e.a, scope);
        return at(e.pos, [&] { return get_attribute(obj, e.name, limits_); });
      }
      case Expr::Kind::item: {
        Value obj = eval(*e.a, scope), key = eval(*e.b, scope);
        return at(e.pos, [&] { return get_item(obj, key, limits_); });
      }
      case Expr::Kind::slice: {
        Value obj = eval(*e.a, scope);
        Value b = e.b ? eval(*e.b, scope) : Value(), c = e.c ? eval(*e.c, scope) : Value(), d = e.d ? eval(*e.d, scope) : Value();
        return at(e.pos, [&] { return get_slice(obj, b, c, d); });
      }
      case Expr::Kind::call: {
        Value callee = eval(*e.a, scope);
        CallArgs args = eval_args(e, scope);
        return at(e.pos, [&] {
          if (callee.is_undefined()) throw ValueError(callee.as_string());
          if (!callee.is_callable()) throw ValueError("'" + type_name(callee) + "' object is not callable");
          return callee.callable().call(args);
        });
      }
      case Expr::Kind::filter: {
        Value input = eval(*e.a, scope);
        CallArgs args = eval_args(e, scope);
        return at(e.pos, [&] { return apply_filter(e.name, input, args, limits_); });
      }
      case Expr::Kind::test: {
        Value input = eval(*e.a, scope);
        CallArgs args = eval_args(e, scope);
        return Value(at(e.pos, [&] { return apply_test(e.name, input, args); }) != e.negated);
      }
      case Expr::Kind::unary: {
        Value v = eval(*e.a, scope);
        if (e.name == "not") return Value(!truthy(v));
        return at(e.pos, [&] { return negate(v, e.name == "-"); });
      }
      case Expr::Kind::conditional:
        if (truthy(eval(*e.b, scope))) return eval(*e.a, scope);
        return e.c ? eval(*e.c, scope) : Value::undefined("the conditional expression's else branch is undefined");
      case Expr::Kind::binary: {
        if (e.name == "and") {
          Value a = eval(*e.a, scope);
          return truthy(a) ? eval(*e.b, scope) : a;
        }
        if (e.name == "or") {
          Value a = eval(*e.a, scope);
          return truthy(a) ? a : eval(*e.b, scope);
        }
        Value a = eval(*e.a, scope), b = eval(*e.b, scope);
        return at(e.pos, [&] { return binary(e.name, a, b); });
      }
    }
    return Value();
  }

  static Value negate(const Value& v, bool minus) {
    if (v.is_int() || v.is_bool()) {
      if (minus && v.as_int() == INT64_MIN) throw ValueError("integer overflow");
      return Value(minus ? -v.as_int() : v.as_int());
    }
    if (v.is_float()) return Value(minus ? -v.as_float() : v.as_float());
    throw ValueError(std::string("bad operand type for unary ") + (minus ? "-" : "+") + ": '" + type_name(v) + "'");
  }

  Value binary(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
      std::string s = to_str(a, limits_.max_output_bytes);
      s += to_str(b, limits_.max_output_bytes);
      return Value(std::move(s));
    }
    if (op == "==") return Value(equals(a, b));
    if (op == "!=") return Value(!equals(a, b));
    if (op == "<") return Value(compare(a, b) < 0);
    if (op == ">") return Value(compare(a, b) > 0);
    if (op == "<=") return Value(compare(a, b) <= 0);
    if (op == ">=") return Value(compare(a, b) >= 0);
    if (op == "in" || op == "not in") {
      CallArgs args;
      args.positional.push_back(b);
      if (!b.is_string() && !b.is_list() && !b.is_dict() && !b.is_undefined())
        throw ValueError("argument of type '" + type_name(b) + "' is not iterable");
      if (b.is_string() && !a.is_string())
        throw ValueError("'in <string>' requires string as left operand, not " + type_name(a));
      return Value(apply_test("in", a, args) == (op == "in"));
    }
    for (const Value* v : {&a, &b})
      if (v->is_undefined()) throw ValueError(v->as_string().empty() ? "undefined value" : v->as_string());
    bool numbers = (a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool());
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        if (a.is_markup() != b.is_markup()) {  // Markup + str escapes the str
          std::string left = a.is_markup() ? a.as_string() : html_escape(a.as_string());
          std::string right = b.is_markup() ? b.as_string() : html_escape(b.as_string());
          check_string_size(left.size() + right.size(), limits_);
          return Value::markup(left + right);
        }
        check_string_size(a.as_string().size() + b.as_string().size(), limits_);
        Value sum(a.as_string() + b.as_string());
        return a.is_markup() ? Value::markup(sum.as_string()) : sum;
      }
      if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
        check_list_size(a.list().size() + b.list().size(), limits_);
        ValueList items = a.list();
        items.insert(items.end(), b.list().begin(), b.list().end());
        return Value(std::move(items), a.is_tuple());
      }
      if (a.is_string()) throw ValueError("can only concatenate str (not \"" + type_name(b) + "\") to str");
      if (a.is_list() && !a.is_tuple()) throw ValueError("can only concatenate list (not \"" + type_name(b) + "\") to list");
    }
    if (op == "*" && (a.is_string() || a.is_list() || b.is_string() || b.is_list())) return repeat(a, b);
    if (!numbers)
      throw ValueError("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
    return arithmetic(op, a, b);
  }

  Value repeat(const Value& a, const Value& b) {
    const Value& seq = a.is_string() || a.is_list() ? a : b;
    const Value& count = &seq == &a ? b : a;
    if (!count.is_int() && !count.is_bool())
      throw ValueError("can't multiply sequence by non-int of type '" + type_name(count) + "'");
    int64_t n = std::max<int64_t>(count.as_int(), 0);
    if (seq.is_string()) {
      if (n && seq.as_string().size() > limits_.max_output_bytes / static_cast<uint64_t>(n))
        throw LimitError("repeating a string " + std::to_string(n) + " times exceeds max_output_bytes (" +
                         std::to_string(limits_.max_output_bytes) + ")");
      std::string out;
      for (int64_t i = 0; i < n; ++i) out += seq.as_string();
      return Value(std::move(out));
    }
    if (n && seq.list().size() > static_cast<uint64_t>(limits_.max_loop_iterations) / static_cast<uint64_t>(n))
      throw LimitError("repeating a list " + std::to_string(n) + " times exceeds max_loop_iterations (" +
                       std::to_string(limits_.max_loop_iterations) + ")");
    ValueList out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.list().begin(), seq.list().end());
    return Value(std::move(out), seq.is_tuple());
  }

  static Value arithmetic(const std::string& op, const Value& a, const Value& b) {
    bool ints = !a.is_float() && !b.is_float();
    if (ints) {
      int64_t x = a.as_int(), y = b.as_int(), r = 0;
      if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value(r);
      if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value(r);
      if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value(r);
      if (op == "//" || op == "%") {
        if (y == 0) throw ValueError("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) throw ValueError("integer overflow");
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) { --q; m += y; }  // Python floors
        return Value(op == "//" ? q : m);
      }
      if (op == "**" && y >= 0) {
        int64_t result = 1, base = x;
        for (int64_t e = y; e > 0; e >>= 1) {
          if ((e & 1) && __builtin_mul_overflow(result, base, &result)) throw ValueError("integer overflow");
          if (e > 1 && __builtin_mul_overflow(base, base, &base)) throw ValueError("integer overflow");
        }
        return Value(result);
      }
      if (op == "+" || op == "-" || op == "*") throw ValueError("integer overflow");
    }
    double x = a.as_float(), y = b.as_float();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "/") {
      if (y == 0) throw ValueError("division by zero");
      return Value(x / y);
    }
    if (op == "//" || op == "%") {
      if (y == 0) throw ValueError("float division by zero");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value(op == "%" ? m : std::floor((x - m) / y + 0.5));
    }
    if (op == "**") return Value(std::pow(x, y));
    throw ValueError("unknown operator " + op);
  }

  const Limits& limits_;
  Builtins builtins_;
  Scope top_;
  std::string* out_ = nullptr;
  Value placeholder_;
  std::vector<std::shared_ptr<ValueDict>> namespaces_;
  int depth_ = 0;
  int64_t steps_ = 0;
  int64_t iterations_ = 0;
};

}  // namespace

std::string evaluate(const Body& body, const Value& variables, const Options& options) {
  Evaluator evaluator(options);
  return evaluator.run(body, variables);
}

}  // namespace engine::chat_template
