// The lexer's whitespace control and the parser's grammar: precedence, the
// statements, and syntax errors that name the line and column.
#include <gtest/gtest.h>

#include "engine/chat_template/lexer.h"
#include "engine/chat_template/parser.h"
#include "tests/chat_template/render.h"

namespace {

using chat_template_test::render;
using chat_template_test::render_error;
namespace ct = engine::chat_template;

TEST(ChatTemplateLexer, SplitsTextTagsAndExpressionTokens) {
  const auto tokens = ct::tokenize("a{{ x.y + 1.5 }}b{# note #}c");
  using T = ct::Token::Type;
  std::vector<T> types;
  for (const auto& t : tokens) types.push_back(t.type);
  EXPECT_EQ(types, (std::vector<T>{T::text, T::var_begin, T::name, T::op, T::name, T::op, T::floating, T::var_end,
                                    T::text, T::text, T::eof}));
  EXPECT_EQ(tokens[6].text, "1.5");
  EXPECT_EQ(tokens[9].text, "c");
}

TEST(ChatTemplateLexer, StringLiteralsTakePythonEscapes) {
  const auto tokens = ct::tokenize(R"({{ 'a\n\'b' ~ "\u00e9\x41\q" }})");
  EXPECT_EQ(tokens[1].text, "a\n'b");
  EXPECT_EQ(tokens[3].text, "\xc3\xa9" "A\\q");
}

TEST(ChatTemplateLexer, TracksLinesAndColumns) {
  const auto tokens = ct::tokenize("ab\ncd {{ x }}");
  EXPECT_EQ(tokens[1].pos.line, 2);
  EXPECT_EQ(tokens[1].pos.column, 4);
  EXPECT_EQ(tokens[2].pos.column, 7);
}

TEST(ChatTemplateWhitespace, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(render("{% if true %}\nyes\n{% endif %}\nafter"), "yes\nafter");
  // Not after an expression.
  EXPECT_EQ(render("{{ 'x' }}\ny"), "x\ny");
}

TEST(ChatTemplateWhitespace, LstripBlocksDropsIndentBeforeABlockTag) {
  EXPECT_EQ(render("  {% if true %}\n    x\n  {% endif %}\n"), "    x\n");
  // Only from a line's start: text before the tag on the line stays.
  EXPECT_EQ(render("a  {% if true %}b{% endif %}"), "a  b");
  // `{%+` keeps the indent.
  EXPECT_EQ(render("  {%+ if true %}b{% endif %}"), "  b");
}

TEST(ChatTemplateWhitespace, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(render("a  \n {{- 'b' -}} \n\n c"), "abc");
  EXPECT_EQ(render("{%- for i in [1, 2] -%}\n  {{ i }}\n{%- endfor %}"), "12");
  EXPECT_EQ(render("x {#- comment -#} y"), "xy");
}

TEST(ChatTemplateWhitespace, RawBlockIsOutputAsItStands) {
  EXPECT_EQ(render("{% raw %}{{ not parsed }}{% endraw %}!"), "{{ not parsed }}!");
}

TEST(ChatTemplateParser, FollowsJinjaPrecedence) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }}"), "7");
  EXPECT_EQ(render("{{ 2 ** 3 ** 2 }}"), "64");  // jinja2 is left-associative here
  EXPECT_EQ(render("{{ 2 * 3 ~ 4 }}"), "64");
  // ~ binds tighter than +, as in jinja2: (1 ~ 2) + 3 adds an int to a str.
  EXPECT_NE(render_error("{{ 1 ~ 2 + 3 }}"), std::nullopt);
  EXPECT_EQ(render("{{ not 1 == 2 }}"), "True");
  EXPECT_EQ(render("{{ 'a' if false else 'b' if true else 'c' }}"), "b");
  EXPECT_EQ(render("{{ 'x' if false }}|"), "|");
  EXPECT_EQ(render("{{ 1 in [1] and 2 not in [1] }}"), "True");
  EXPECT_EQ(render("{{ -2 | abs }}"), "2");
  EXPECT_EQ(render("{{ [1, 2, 3] | length > 2 }}"), "True");
  EXPECT_EQ(render("{{ 'abc'[1:] ~ 'abc'[::-1] ~ 'abc'[-1] }}"), "bccbac");
}

TEST(ChatTemplateParser, ParsesLiterals) {
  EXPECT_EQ(render("{{ [1, 'a', none, true, 1.5, (1,), {'k': [2]}] }}"), "[1, 'a', None, True, 1.5, (1,), {'k': [2]}]");
  EXPECT_EQ(render("{{ 'a' 'b' }}"), "ab");
  EXPECT_EQ(render("{{ {0: 'zero', 512: 'x'}[512] }}"), "x");
}

TEST(ChatTemplateParser, ElifChains) {
  const std::string t = "{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three{% else %}other{% endif %}";
  EXPECT_EQ(render(t, R"({"x": 1})"), "one");
  EXPECT_EQ(render(t, R"({"x": 3})"), "three");
  EXPECT_EQ(render(t, R"({"x": 9})"), "other");
}

TEST(ChatTemplateParser, SyntaxErrorsNameLineAndColumn) {
  auto e = render_error("line one\n{% if x %}\n{{ x }");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ct::Error::Kind::syntax);
  EXPECT_EQ(e->line(), 3);
  EXPECT_NE(std::string(e->what()).find("line 3"), std::string::npos) << e->what();

  e = render_error("{% if x %}never closed");
  ASSERT_TRUE(e);
  EXPECT_NE(e->message().find("expected '{% endif %}'"), std::string::npos) << e->message();

  e = render_error("{% frobnicate %}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "unknown statement 'frobnicate'");
  EXPECT_EQ(e->column(), 4);

  e = render_error("{{ 1 + }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ct::Error::Kind::syntax);

  e = render_error("{% break %}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "'break' outside a loop");

  e = render_error("{{ 'unterminated }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "unterminated string");

  // An unterminated tag points at where it opens, not at the end.
  e = render_error("a\n  {{ x + \n\n 1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "unterminated '{{' tag");
  EXPECT_EQ(e->line(), 2);
  EXPECT_EQ(e->column(), 3);
}

}  // namespace
