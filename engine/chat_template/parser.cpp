#include "engine/chat_template/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

namespace engine::chat_template {
namespace {

using T = Token::Type;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int max_depth) : t_(tokens), max_depth_(max_depth) {}

  Body run() {
    std::string end;
    Body body = parse_body({}, end);
    return body;
  }

 private:
  // --- token helpers ---
  const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token& next() { const Token& tok = peek(); if (i_ < t_.size() - 1) ++i_; return tok; }
  bool is_op(std::string_view op, size_t ahead = 0) const { return peek(ahead).type == T::op && peek(ahead).text == op; }
  bool is_name(std::string_view name, size_t ahead = 0) const { return peek(ahead).type == T::name && peek(ahead).text == name; }
  bool accept_op(std::string_view op) { if (!is_op(op)) return false; next(); return true; }
  bool accept_name(std::string_view name) { if (!is_name(name)) return false; next(); return true; }
  [[noreturn]] void error(const Token& tok, const std::string& message) { fail(Error::Kind::syntax, tok.pos, message); }
  static std::string describe(const Token& tok) {
    switch (tok.type) {
      case T::eof: return "end of template";
      case T::block_end: return "'%}'";
      case T::var_end: return "'}}'";
      case T::text: return "text";
      case T::string: return "a string";
      default: return "'" + tok.text + "'";
    }
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) error(peek(), "expected '" + std::string(op) + "', found " + describe(peek()));
  }
  std::string expect_identifier() {
    if (peek().type != T::name) error(peek(), "expected a name, found " + describe(peek()));
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != T::block_end) error(peek(), "expected '%}', found " + describe(peek()));
    next();
  }

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > p.max_depth_)
        fail(Error::Kind::limit, at.pos, "template nests deeper than max_depth (" + std::to_string(p.max_depth_) + ")");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // --- statements ---

  // Statements until a block tag whose keyword is in `ends` (consumed up to
  // the keyword; `end` receives it) or, with no ends, the end of input.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& end) {
    DepthGuard guard(*this, peek());
    Body body;
    for (;;) {
      const Token& tok = peek();
      if (tok.type == T::eof) {
        if (ends.size() == 0) return body;
        error(tok, "unexpected end of template: expected '{% " + std::string(*(ends.end() - 1)) + " %}'");
      }
      if (tok.type == T::text) {
        auto s = stmt(Stmt::Kind::text, tok);
        s->text = tok.text;
        body.push_back(std::move(s));
        next();
      } else if (tok.type == T::var_begin) {
        next();
        auto s = stmt(Stmt::Kind::output, tok);
        s->expr = expression();
        if (peek().type != T::var_end) error(peek(), "expected '}}', found " + describe(peek()));
        next();
        body.push_back(std::move(s));
      } else if (tok.type == T::block_begin) {
        const Token& keyword = peek(1);
        for (std::string_view e : ends)
          if (keyword.type == T::name && keyword.text == e) {
            next();
            next();
            end = keyword.text;
            return body;
          }
        next();
        body.push_back(statement());
      } else {
        error(tok, "unexpected " + describe(tok));
      }
    }
  }

  static StmtPtr stmt(Stmt::Kind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->pos = at.pos;
    return s;
  }

  StmtPtr statement() {
    const Token& keyword = peek();
    if (keyword.type != T::name) error(keyword, "expected a statement keyword, found " + describe(keyword));
    const std::string& k = keyword.text;
    next();
    if (k == "if") return if_statement(keyword);
    if (k == "for") return for_statement(keyword);
    if (k == "set") return set_statement(keyword);
    if (k == "macro") return macro_statement(keyword);
    if (k == "filter") return filter_statement(keyword);
    if (k == "generation") {
      auto s = stmt(Stmt::Kind::scope, keyword);
      expect_block_end();
      std::string end;
      s->body = parse_body({"endgeneration"}, end);
      expect_block_end();
      return s;
    }
    if (k == "break" || k == "continue") {
      if (loop_depth_ == 0) error(keyword, "'" + k + "' outside a loop");
      auto s = stmt(k == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_, keyword);
      expect_block_end();
      return s;
    }
    error(keyword, "unknown statement '" + k + "'");
  }

  StmtPtr if_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::if_, at);
    s->expr = expression();
    expect_block_end();
    std::string end;
    s->body = parse_body({"elif", "else", "endif"}, end);
    if (end == "elif") {
      s->else_body.push_back(if_statement(peek()));
      return s;  // the nested if consumed the endif
    }
    if (end == "else") {
      expect_block_end();
      s->else_body = parse_body({"endif"}, end);
    }
    expect_block_end();
    return s;
  }

  StmtPtr for_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::for_, at);
    do s->targets.push_back(expect_identifier());
    while (accept_op(","));
    if (!accept_name("in")) error(peek(), "expected 'in' in for loop, found " + describe(peek()));
    s->expr = or_expression(false);  // `if` here filters the loop, not a conditional expression
    if (accept_name("if")) s->condition = expression();
    if (accept_name("recursive")) s->recursive = true;
    expect_block_end();
    std::string end;
    ++loop_depth_;
    s->body = parse_body({"else", "endfor"}, end);
    --loop_depth_;
    if (end == "else") {
      expect_block_end();
      s->else_body = parse_body({"endfor"}, end);
    }
    expect_block_end();
    return s;
  }

  StmtPtr set_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::set, at);
    s->targets.push_back(expect_identifier());
    if (accept_op(".")) {
      s->attribute = expect_identifier();
    } else {
      while (accept_op(",")) s->targets.push_back(expect_identifier());
    }
    if (accept_op("=")) {
      s->expr = expression();
      if (is_op(",")) {  // a, b = 1, 2: the right side is a tuple
        auto tuple = make(Expr::Kind::tuple, peek());
        tuple->items.push_back(std::move(s->expr));
        while (accept_op(",")) tuple->items.push_back(expression());
        s->expr = std::move(tuple);
      }
      expect_block_end();
      return s;
    }
    if (s->targets.size() != 1 || !s->attribute.empty()) error(peek(), "expected '=' in set");
    s->kind = Stmt::Kind::set_block;
    if (is_op("|")) s->expr = filter_chain(make(Expr::Kind::placeholder, peek()));
    expect_block_end();
    std::string end;
    s->body = parse_body({"endset"}, end);
    expect_block_end();
    return s;
  }

  StmtPtr macro_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::macro, at);
    s->text = expect_identifier();
    expect_op("(");
    while (!accept_op(")")) {
      if (!s->params.empty()) expect_op(",");
      if (accept_op(")")) break;
      std::string name = expect_identifier();
      ExprPtr def;
      if (accept_op("=")) def = expression();
      s->params.emplace_back(std::move(name), std::move(def));
    }
    expect_block_end();
    int saved = loop_depth_;
    loop_depth_ = 0;  // a loop outside the macro cannot be broken from inside it
    std::string end;
    s->body = parse_body({"endmacro"}, end);
    loop_depth_ = saved;
    if (peek().type == T::name && peek().text == s->text) next();
    expect_block_end();
    return s;
  }

  StmtPtr filter_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::filter_block, at);
    s->expr = filter_chain(make(Expr::Kind::placeholder, at), /*leading_bar=*/false);
    expect_block_end();
    std::string end;
    s->body = parse_body({"endfilter"}, end);
    expect_block_end();
    return s;
  }

  // --- expressions ---

  static ExprPtr make(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = at.pos;
    return e;
  }
  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b, const Token& at) {
    auto e = make(Expr::Kind::binary, at);
    e->name = std::move(op);
    e->a = std::move(a);
    e->b = std::move(b);
    return finish(std::move(e));
  }

  // Sets a node's height from its children's and bounds it: chains such as
  // `a ~ b ~ c ...` or `x|f|g ...` are parsed by loops, not recursion, so
  // their depth is checked here.
  ExprPtr finish(ExprPtr e) {
    int h = 0;
    for (const ExprPtr* child : {&e->a, &e->b, &e->c, &e->d})
      if (*child) h = std::max(h, (*child)->height);
    for (const auto& item : e->items) h = std::max(h, item->height);
    for (const auto& [name, item] : e->named) h = std::max(h, item->height);
    e->height = h + 1;
    if (e->height > max_depth_)
      fail(Error::Kind::limit, e->pos, "expression nests deeper than max_depth (" + std::to_string(max_depth_) + ")");
    return e;
  }

  ExprPtr expression() {
    DepthGuard guard(*this, peek());
    return or_expression(true);
  }

  // `with_condition`: whether `x if c else y` is allowed at this level.
  ExprPtr or_expression(bool with_condition) {
    ExprPtr e = or_chain();
    while (with_condition && is_name("if")) {
      const Token& at = next();
      auto cond = make(Expr::Kind::conditional, at);
      cond->a = std::move(e);
      cond->b = or_chain();
      if (accept_name("else")) cond->c = or_expression(true);
      e = finish(std::move(cond));
    }
    return e;
  }

  ExprPtr or_chain() {
    ExprPtr e = and_chain();
    while (is_name("or")) { const Token& at = next(); e = binary("or", std::move(e), and_chain(), at); }
    return e;
  }
  ExprPtr and_chain() {
    ExprPtr e = not_expression();
    while (is_name("and")) { const Token& at = next(); e = binary("and", std::move(e), not_expression(), at); }
    return e;
  }
  ExprPtr not_expression() {
    if (is_name("not")) {
      DepthGuard guard(*this, peek());
      const Token& at = next();
      auto e = make(Expr::Kind::unary, at);
      e->name = "not";
      e->a = not_expression();
      return finish(std::move(e));
    }
    return comparison();
  }
  ExprPtr comparison() {
    ExprPtr e = additive();
    for (;;) {
      const Token& at = peek();
      std::string op;
      if (at.type == T::op && (at.text == "==" || at.text == "!=" || at.text == "<" || at.text == ">" ||
                               at.text == "<=" || at.text == ">=")) {
        op = at.text;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && is_name("in", 1)) {
        op = "not in";
        next();
        next();
      } else {
        return e;
      }
      e = binary(op, std::move(e), additive(), at);
    }
  }
  ExprPtr additive() {
    ExprPtr e = concatenation();
    while (is_op("+") || is_op("-")) { const Token& at = next(); e = binary(at.text, std::move(e), concatenation(), at); }
    return e;
  }
  ExprPtr concatenation() {
    ExprPtr e = multiplicative();
    while (is_op("~")) { const Token& at = next(); e = binary("~", std::move(e), multiplicative(), at); }
    return e;
  }
  ExprPtr multiplicative() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = next();
      e = binary(at.text, std::move(e), power(), at);
    }
    return e;
  }
  ExprPtr power() {
    ExprPtr e = unary();
    while (is_op("**")) { const Token& at = next(); e = binary("**", std::move(e), unary(), at); }
    return e;
  }
  // As jinja2: the operand of a sign takes no filters, so `-2 | abs` is
  // abs(-2).
  ExprPtr unary(bool with_filters = true) {
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      DepthGuard guard(*this, peek());
      const Token& at = next();
      e = make(Expr::Kind::unary, at);
      e->name = at.text;
      e->a = unary(false);
      e = finish(std::move(e));
    } else {
      e = postfix(primary());
    }
    return with_filters ? filters_and_tests(std::move(e)) : std::move(e);
  }

  ExprPtr primary() {
    const Token& tok = peek();
    switch (tok.type) {
      case T::name: {
        next();
        auto e = make(Expr::Kind::literal, tok);
        if (tok.text == "true" || tok.text == "True") e->value = Value(true);
        else if (tok.text == "false" || tok.text == "False") e->value = Value(false);
        else if (tok.text == "none" || tok.text == "None") e->value = Value::none();
        else { e->kind = Expr::Kind::name; e->name = tok.text; }
        return e;
      }
      case T::string: {
        auto e = make(Expr::Kind::literal, tok);
        std::string s;
        while (peek().type == T::string) s += next().text;  // adjacent literals join, as in Python
        e->value = Value(std::move(s));
        return e;
      }
      case T::integer: {
        next();
        auto e = make(Expr::Kind::literal, tok);
        int64_t v = 0;
        auto r = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
        if (r.ec != std::errc()) error(tok, "integer literal out of range");
        e->value = Value(v);
        return e;
      }
      case T::floating: {
        next();
        auto e = make(Expr::Kind::literal, tok);
        double v = 0;
        std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
        e->value = Value(v);
        return e;
      }
      case T::op:
        if (tok.text == "(") return parenthesized();
        if (tok.text == "[") return list_literal();
        if (tok.text == "{") return dict_literal();
        break;
      default: break;
    }
    error(tok, "unexpected " + describe(tok) + " in expression");
  }

  ExprPtr parenthesized() {
    DepthGuard guard(*this, peek());
    const Token& at = next();
    if (accept_op(")")) return make(Expr::Kind::tuple, at);
    ExprPtr e = expression();
    if (!is_op(",")) { expect_op(")"); return e; }
    auto tuple = make(Expr::Kind::tuple, at);
    tuple->items.push_back(std::move(e));
    while (accept_op(",")) {
      if (is_op(")")) break;
      tuple->items.push_back(expression());
    }
    expect_op(")");
    return finish(std::move(tuple));
  }
  ExprPtr list_literal() {
    auto e = make(Expr::Kind::list, next());
    while (!accept_op("]")) {
      if (!e->items.empty()) { expect_op(","); if (accept_op("]")) break; }
      e->items.push_back(expression());
    }
    return finish(std::move(e));
  }
  ExprPtr dict_literal() {
    auto e = make(Expr::Kind::dict, next());
    while (!accept_op("}")) {
      if (!e->items.empty()) { expect_op(","); if (accept_op("}")) break; }
      e->items.push_back(expression());
      expect_op(":");
      e->items.push_back(expression());
    }
    return finish(std::move(e));
  }

  ExprPtr postfix(ExprPtr e) {
    for (;;) {
      const Token& at = peek();
      if (accept_op(".")) {
        auto attr = make(Expr::Kind::attribute, at);
        if (peek().type == T::integer) {  // x.0 is x[0]
          attr->kind = Expr::Kind::item;
          attr->b = make(Expr::Kind::literal, peek());
          attr->b->value = Value(static_cast<int64_t>(std::strtoll(next().text.c_str(), nullptr, 10)));
        } else {
          attr->name = expect_identifier();
        }
        attr->a = std::move(e);
        e = finish(std::move(attr));
      } else if (accept_op("[")) {
        e = subscript(std::move(e), at);
      } else if (is_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(ExprPtr object, const Token& at) {
    ExprPtr parts[3];
    int colons = 0;
    for (;;) {
      if (is_op("]")) break;
      if (accept_op(":")) {
        if (++colons > 2) error(at, "too many ':' in subscript");
        continue;
      }
      if (parts[colons]) error(peek(), "expected ':' or ']' in subscript");
      parts[colons] = expression();
    }
    expect_op("]");
    auto e = make(colons ? Expr::Kind::slice : Expr::Kind::item, at);
    e->a = std::move(object);
    if (!colons && !parts[0]) error(at, "empty subscript");
    e->b = std::move(parts[0]);
    e->c = std::move(parts[1]);
    e->d = std::move(parts[2]);
    return finish(std::move(e));
  }

  // Arguments of a call, filter or test: positional then name=value.
  void arguments(Expr& e) {
    expect_op("(");
    while (!accept_op(")")) {
      if (!e.items.empty() || !e.named.empty()) { expect_op(","); if (accept_op(")")) break; }
      if (peek().type == T::name && is_op("=", 1)) {
        std::string name = next().text;
        next();
        e.named.emplace_back(std::move(name), expression());
      } else {
        if (!e.named.empty()) error(peek(), "positional argument after a keyword argument");
        e.items.push_back(expression());
      }
    }
  }

  ExprPtr call(ExprPtr callee) {
    DepthGuard guard(*this, peek());
    auto e = make(Expr::Kind::call, peek());
    e->pos = callee->pos;  // errors point at what is called
    e->a = std::move(callee);
    arguments(*e);
    return finish(std::move(e));
  }

  ExprPtr filter_chain(ExprPtr e, bool leading_bar = true) {
    bool first = true;
    while ((first && !leading_bar) || accept_op("|")) {
      first = false;
      DepthGuard guard(*this, peek());
      const Token& at = peek();
      auto f = make(Expr::Kind::filter, at);
      f->name = expect_identifier();
      while (accept_op(".")) f->name += "." + expect_identifier();
      if (is_op("(")) arguments(*f);
      f->a = std::move(e);
      e = finish(std::move(f));
    }
    return e;
  }

  ExprPtr filters_and_tests(ExprPtr e) {
    for (;;) {
      if (is_op("|")) {
        e = postfix(filter_chain(std::move(e)));
      } else if (is_name("is")) {
        DepthGuard guard(*this, peek());
        const Token& at = next();
        auto t = make(Expr::Kind::test, at);
        t->negated = accept_name("not");
        t->name = expect_identifier();
        if (is_op("(")) {
          arguments(*t);
        } else if (peek().type == T::string || peek().type == T::integer || peek().type == T::floating ||
                   is_op("[") || is_op("{") ||
                   (peek().type == T::name && !is_name("and") && !is_name("or") && !is_name("if") &&
                    !is_name("else") && !is_name("in") && !is_name("is") && !is_name("not") && !is_name("recursive"))) {
          t->items.push_back(postfix(primary()));  // `is equalto 'x'`: one argument without parentheses
        }
        t->a = std::move(e);
        e = finish(std::move(t));
      } else {
        return e;
      }
    }
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
  int max_depth_;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, int max_depth) { return Parser(tokens, max_depth).run(); }

}  // namespace engine::chat_template
