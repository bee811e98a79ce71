// GBNF grammars as llama.cpp writes them (grammars/README.md there): rules
//
//   name ::= alternative | alternative ...
//
// whose alternatives are sequences of string literals ("...", with \n \t \r
// \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH escapes), character classes ([a-z_],
// [^"\\], the same escapes), `.` (any code point), rule names, groups in
// parentheses and the repetitions *, +, ?, {m}, {m,} and {m,n}; `#` starts a
// comment. Parsed into a Grammar whose elements are only code-point sets and
// rule references: a group or a repetition becomes a rule of its own, as
// llama.cpp's parser does, so the matcher (grammar_matcher.h) has two kinds
// of element to walk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/support/error.h"

namespace engine::grammar {

// A grammar that does not parse or cannot be matched (an undefined rule, left
// recursion, no root), with the 1-based line and column it points at (0, 0
// for a problem of the whole grammar). C API: ENGINE_ERR_INVALID_ARGUMENT.
class GrammarError : public Error {
 public:
  GrammarError(const std::string& message, int line, int column);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_, column_;
};

struct CodeRange {
  uint32_t lo, hi;  // inclusive
};

struct Element {
  enum class Kind : uint8_t { chars, rule };
  Kind kind = Kind::chars;
  // chars: one code point matching any range (none of them when negated).
  bool negated = false;
  std::vector<CodeRange> ranges;
  // rule: the index in Grammar::rules.
  uint32_t rule = 0;

  bool matches(uint32_t cp) const;
  // Whether some code point of lo..hi may match (a UTF-8 sequence begun but
  // not finished): exact for a plain set, and for a negated one false only
  // when one of its ranges covers all of lo..hi.
  bool may_match(uint32_t lo, uint32_t hi) const;
};

using Sequence = std::vector<Element>;

struct Rule {
  std::string name;  // a generated rule (group, repetition) is "parent_N"
  std::vector<Sequence> alternatives;
};

struct Grammar {
  std::vector<Rule> rules;
  uint32_t root = 0;

  // The index of the rule `name`, or -1.
  int64_t find(std::string_view name) const;
};

// Parses `text`; `root` names the start rule. Throws GrammarError naming the
// line and column of a syntax error, an undefined rule, or a rule that can
// reach itself without consuming a code point (left recursion, which the
// matcher could not expand).
Grammar parse_gbnf(std::string_view text, std::string_view root = "root");

// A GBNF string literal ("...", quotes and escapes included) of these bytes:
// for grammars written by code (json_schema.h, tool calls).
std::string gbnf_literal(std::string_view bytes);

}  // namespace engine::grammar
