// A recursive-descent parser of GBNF (gbnf.h), then two checks of the whole
// grammar: every referenced rule is defined, and no rule reaches itself
// before a code point is consumed.
#include "engine/grammar/gbnf.h"

#include <algorithm>
#include <map>

#include "engine/support/text.h"

namespace engine::grammar {

GrammarError::GrammarError(const std::string& message, int line, int column)
    : Error(line > 0 ? "grammar: line " + std::to_string(line) + ", column " + std::to_string(column) +
                                        ": " + message
                                  : "grammar: " + message),
      line_(line),
      column_(column) {}

bool Element::matches(uint32_t cp) const {
  bool in = false;
  for (const CodeRange& r : ranges) in = in || (cp >= r.lo && cp <= r.hi);
  return in != negated;
}

bool Element::may_match(uint32_t lo, uint32_t hi) const {
  for (const CodeRange& r : ranges) {
    if (negated && r.lo <= lo && r.hi >= hi) return false;
    if (!negated && r.lo <= hi && r.hi >= lo) return true;
  }
  return negated;
}

int64_t Grammar::find(std::string_view name) const {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kMaxRepetition = 10000;  // {m,n} bounds: each copy is a rule element
// What repetitions may unroll in all, counting an element and each of its
// code-point ranges: x{m}{n} copies m copies n times, so a few bytes of text
// could otherwise ask for 10^8 elements and minutes of copying.
constexpr size_t kMaxUnrolled = size_t{1} << 22;

size_t weight(const Sequence& seq) {
  size_t w = 0;
  for (const Element& e : seq) w += 1 + e.ranges.size();
  return w;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Grammar parse(std::string_view root) {
    skip_space(true);
    while (pos_ < s_.size()) {
      const size_t name_at = pos_;
      const std::string name = parse_name();
      skip_space(false);
      if (s_.substr(pos_, 3) != "::=") fail("expected '::=' after the rule name '" + name + "'");
      pos_ += 3;
      skip_space(true);
      const uint32_t id = rule_id(name, name_at);
      if (defined_[id]) fail_at("rule '" + name + "' is defined twice", name_at);
      defined_[id] = true;
      g_.rules[id].alternatives = parse_alternatives(name, false);
      skip_space(true);
    }
    for (size_t i = 0; i < g_.rules.size(); ++i) {
      if (!defined_[i]) fail_at("rule '" + g_.rules[i].name + "' is used but not defined", first_use_[i]);
    }
    const int64_t r = g_.find(root);
    if (r < 0) throw GrammarError("no rule '" + std::string(root) + "' (the start rule)", 0, 0);
    g_.root = static_cast<uint32_t>(r);
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail_at(const std::string& message, size_t at) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw GrammarError(message, line, column);
  }
  [[noreturn]] void fail(const std::string& message) const { fail_at(message, pos_); }

  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  }

  // Spaces, tabs and comments; newlines too where a rule may continue
  // (inside parentheses, after an operator) or between rules.
  void skip_space(bool newlines) {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n' && newlines) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    if (pos_ == start) fail("expected a rule name");
    return std::string(s_.substr(start, pos_ - start));
  }

  uint32_t rule_id(const std::string& name, size_t used_at) {
    const auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(g_.rules.size());
    ids_.emplace(name, id);
    g_.rules.push_back({name, {}});
    defined_.push_back(false);
    first_use_.push_back(used_at);
    return id;
  }

  uint32_t new_rule(const std::string& parent, std::vector<Sequence> alternatives) {
    const std::string name = parent + "_" + std::to_string(g_.rules.size());
    const uint32_t id = rule_id(name, pos_);
    defined_[id] = true;
    g_.rules[id].alternatives = std::move(alternatives);
    return id;
  }

  static Element rule_element(uint32_t id) {
    Element e;
    e.kind = Element::Kind::rule;
    e.rule = id;
    return e;
  }

  // One UTF-8 code point of the text, or an escape.
  uint32_t parse_char() {
    if (pos_ >= s_.size()) fail("unexpected end of the grammar");
    const auto c = static_cast<unsigned char>(s_[pos_]);
    if (c == '\\') {
      if (pos_ + 1 >= s_.size()) fail("unexpected end after '\\'");
      const char e = s_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case 'n': return '\n';
        case 't': return '\t';
        case 'r': return '\r';
        case '\\': case '"': case '[': case ']': case '-': case '^': return static_cast<unsigned char>(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default: pos_ -= 2; fail(std::string("unknown escape '\\") + e + "'");
      }
    }
    const int len = utf8_sequence_length(c);
    if (len == 0 || pos_ + static_cast<size_t>(len) > s_.size()) fail("invalid UTF-8 in the grammar");
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int i = 1; i < len; ++i) {
      const auto b = static_cast<unsigned char>(s_[pos_ + static_cast<size_t>(i)]);
      if ((b & 0xC0) != 0x80) fail("invalid UTF-8 in the grammar");
      cp = (cp << 6) | (b & 0x3F);
    }
    pos_ += static_cast<size_t>(len);
    return cp;
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= s_.size()) fail("expected " + std::to_string(digits) + " hex digits");
      const char h = s_[pos_];
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) fail("expected " + std::to_string(digits) + " hex digits");
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodePoint) fail("code point past U+10FFFF");
    return v;
  }

  size_t parse_count() {
    const size_t start = pos_;
    size_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + static_cast<size_t>(s_[pos_] - '0');
      if (v > kMaxRepetition) fail("a repetition count over " + std::to_string(kMaxRepetition));
      ++pos_;
    }
    if (pos_ == start) fail("expected a number");
    return v;
  }

  std::vector<Sequence> parse_alternatives(const std::string& rule, bool nested) {
    std::vector<Sequence> alts;
    alts.push_back(parse_sequence(rule, nested));
    while (pos_ < s_.size() && s_[pos_] == '|') {
      ++pos_;
      skip_space(true);
      alts.push_back(parse_sequence(rule, nested));
    }
    return alts;
  }

  // Elements up to '|', ')' (nested) or the end of the line (a rule's end).
  Sequence parse_sequence(const std::string& rule, bool nested) {
    Sequence seq;
    size_t last_start = 0;  // where the last element's items begin in seq
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '|' || (c == ')' && nested)) break;
      // A newline ends a rule; inside parentheses it is space (and after
      // '|', parse_alternatives skips it).
      if (c == '\n') {
        if (!nested) break;
        skip_space(true);
        continue;
      }
      const size_t at = pos_;
      if (c == '"') {
        ++pos_;
        last_start = seq.size();
        while (pos_ < s_.size() && s_[pos_] != '"') {
          const uint32_t cp = parse_char();
          seq.push_back({Element::Kind::chars, false, {{cp, cp}}, 0});
        }
        if (pos_ >= s_.size()) fail_at("unterminated string", at);
        ++pos_;
      } else if (c == '[') {
        ++pos_;
        Element e;
        if (pos_ < s_.size() && s_[pos_] == '^') {
          e.negated = true;
          ++pos_;
        }
        while (pos_ < s_.size() && s_[pos_] != ']') {
          const uint32_t lo = parse_char();
          uint32_t hi = lo;
          if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
            ++pos_;
            hi = parse_char();
            if (hi < lo) fail_at("a character range whose end is before its start", at);
          }
          e.ranges.push_back({lo, hi});
        }
        if (pos_ >= s_.size()) fail_at("unterminated character class", at);
        ++pos_;
        last_start = seq.size();
        seq.push_back(std::move(e));
      } else if (c == '.') {
        ++pos_;
        last_start = seq.size();
        seq.push_back({Element::Kind::chars, false, {{0, kMaxCodePoint}}, 0});
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        std::vector<Sequence> alts = parse_alternatives(rule, true);
        if (pos_ >= s_.size() || s_[pos_] != ')') fail_at("unclosed '('", at);
        ++pos_;
        last_start = seq.size();
        seq.push_back(rule_element(new_rule(rule, std::move(alts))));
      } else if (is_name_char(c)) {
        const std::string name = parse_name();
        last_start = seq.size();
        seq.push_back(rule_element(rule_id(name, at)));
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (seq.empty()) fail("a repetition with nothing before it");
        repeat(rule, seq, last_start);
      } else {
        fail(std::string("unexpected '") + c + "'");
      }
      skip_space(nested);
    }
    return seq;
  }

  // Applies the repetition at pos_ to seq[from..]: x* is a rule R ::= x R |
  // (empty), x+ is x x*, x? is R ::= x | (empty), x{m,n} is m copies of x and
  // n - m nested optional ones, x{m,} m copies and x*.
  void repeat(const std::string& rule, Sequence& seq, size_t from) {
    const Sequence item(seq.begin() + static_cast<std::ptrdiff_t>(from), seq.end());
    seq.resize(from);
    size_t min = 0, max = SIZE_MAX;
    const size_t at = pos_;
    const char op = s_[pos_++];
    if (op == '*') {
      min = 0;
    } else if (op == '+') {
      min = 1;
    } else if (op == '?') {
      max = 1;
    } else {  // {m}, {m,}, {m,n}
      skip_space(false);
      min = parse_count();
      skip_space(false);
      max = min;
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        skip_space(false);
        max = pos_ < s_.size() && s_[pos_] == '}' ? SIZE_MAX : parse_count();
        skip_space(false);
      }
      if (pos_ >= s_.size() || s_[pos_] != '}') fail("expected '}'");
      ++pos_;
      if (max < min) fail("a repetition {m,n} with n < m");
    }
    const size_t copies = min + (max == SIZE_MAX ? 1 : max - min);
    const size_t unrolled = weight(item) * copies;  // at most 2^22 * 20001: no overflow
    if (unrolled > kMaxUnrolled - unrolled_) {
      fail_at("repetitions unroll to more than " + std::to_string(kMaxUnrolled) +
                  " grammar elements (a repetition of a repetition?)",
              at);
    }
    unrolled_ += unrolled;
    for (size_t i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
    if (max == SIZE_MAX) {
      // R ::= item R |
      const uint32_t id = new_rule(rule, {});
      Sequence again = item;
      again.push_back(rule_element(id));
      g_.rules[id].alternatives = {again, {}};
      seq.push_back(rule_element(id));
      return;
    }
    // n - m optional copies, nested: R1 ::= item R2 | , ..., Rk ::= item |
    uint32_t next = 0;
    bool have_next = false;
    for (size_t i = min; i < max; ++i) {
      Sequence body = item;
      if (have_next) body.push_back(rule_element(next));
      next = new_rule(rule, {body, {}});
      have_next = true;
    }
    if (have_next) seq.push_back(rule_element(next));
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t unrolled_ = 0;  // the elements repetitions have copied so far
  Grammar g_;
  std::map<std::string, uint32_t, std::less<>> ids_;
  std::vector<bool> defined_;
  std::vector<size_t> first_use_;
};

// Left recursion: a rule that reaches itself through rule references each of
// which is preceded, in its alternative, only by rules that can match nothing.
void check_left_recursion(const Grammar& g) {
  const size_t n = g.rules.size();
  std::vector<bool> nullable(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (const Sequence& alt : g.rules[r].alternatives) {
        const bool all = std::all_of(alt.begin(), alt.end(), [&](const Element& e) {
          return e.kind == Element::Kind::rule && nullable[e.rule];
        });
        if (all) {
          nullable[r] = true;
          changed = true;
          break;
        }
      }
    }
  }
  // first[r]: the rules r can reach at its start.
  std::vector<std::vector<uint32_t>> first(n);
  for (size_t r = 0; r < n; ++r) {
    for (const Sequence& alt : g.rules[r].alternatives) {
      for (const Element& e : alt) {
        if (e.kind != Element::Kind::rule) break;
        first[r].push_back(e.rule);
        if (!nullable[e.rule]) break;
      }
    }
  }
  std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t start = 0; start < n; ++start) {
    if (state[start] != 0) continue;
    stack.push_back({start, 0});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [r, i] = stack.back();
      if (i == first[r].size()) {
        state[r] = 2;
        stack.pop_back();
        continue;
      }
      const uint32_t next = first[r][i++];
      if (state[next] == 1) {
        throw GrammarError("rule '" + g.rules[next].name + "' is left-recursive (it can reach itself before matching anything)",
                           0, 0);
      }
      if (state[next] == 0) {
        state[next] = 1;
        stack.push_back({next, 0});
      }
    }
  }
}

}  // namespace

Grammar parse_gbnf(std::string_view text, std::string_view root) {
  Grammar g = Parser(text).parse(root);
  check_left_recursion(g);
  return g;
}

std::string gbnf_literal(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace engine::grammar
