// The evaluator: scoping as jinja2 has it, loops and loop controls, macros,
// namespaces, the Python meanings of values, raise_exception, strftime_now
// with an injected clock, and runtime errors that name the position.
#include <gtest/gtest.h>

#include "tests/chat_template/render.h"

namespace {

using chat_template_test::render;
using chat_template_test::render_error;
namespace ct = engine::chat_template;

TEST(ChatTemplateEvaluator, PrintsValuesAsPythonsStr) {
  EXPECT_EQ(render("{{ none }}|{{ true }}|{{ 1.0 }}|{{ 0.1 }}|{{ 1e20 }}|{{ 7 // 2 }}|{{ 7 / 2 }}|{{ -7 % 3 }}"),
            "None|True|1.0|0.1|1e+20|3|3.5|2");
  EXPECT_EQ(render("{{ x }}", R"({"x": {"a": [1, "it's", null, false]}})"), "{'a': [1, \"it's\", None, False]}");
  EXPECT_EQ(render("{{ undefined_name }}|{{ x.missing }}", R"({"x": {}})"), "|");
}

TEST(ChatTemplateEvaluator, ForLoopHasLoopVariablesAndElse) {
  EXPECT_EQ(render("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ x }}{{ loop.first }}{{ loop.last }}"
                   "{{ loop.revindex0 }}{% if not loop.last %},{% endif %}{% endfor %}"),
            "1aTrueFalse2,2bFalseFalse1,3cFalseTrue0");
  EXPECT_EQ(render("{% for x in [1, 2] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}"), "-2;1-;");
  EXPECT_EQ(render("{% for x in [] %}no{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"b": 1, "a": 2}})"), "b=1;a=2;");
  EXPECT_EQ(render("{% for x in [1, 2, 3, 4] if x is odd %}{{ x }}{{ loop.length }}{% endfor %}"), "1232");
  EXPECT_EQ(render("{% for c in 'hé' %}[{{ c }}]{% endfor %}"), "[h][é]");
  EXPECT_EQ(render("{% for x in undefined_name %}x{% endfor %}ok"), "ok");
}

TEST(ChatTemplateEvaluator, BreakAndContinue) {
  EXPECT_EQ(render("{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}"
                   "{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
            "0134");
}

TEST(ChatTemplateEvaluator, SetInALoopStaysInTheLoopButNamespacesCarryOut) {
  EXPECT_EQ(render("{% set n = 0 %}{% for i in [1, 2] %}{% set n = n + i %}{{ n }}{% endfor %}|{{ n }}"), "13|0");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1, 2] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "3");
  auto e = render_error("{% set d = {} %}{% set d.x = 1 %}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "cannot assign attribute on non-namespace object");
}

TEST(ChatTemplateEvaluator, SetForms) {
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}  text {{ 1 }}  {% endset %}[{{ block }}]"), "[  text 1  ]");
  EXPECT_EQ(render("{% set block | trim | upper %}  text  {% endset %}[{{ block }}]"), "[TEXT]");
}

TEST(ChatTemplateEvaluator, MacrosTakeArgumentsDefaultsAndKeywords) {
  const std::string t =
      "{% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}"
      "{{ greet('Ann') }} {{ greet('Bo', punct='?') }} {{ greet('Cy', 'Hi') }}";
  EXPECT_EQ(render(t), "Hello, Ann! Hello, Bo? Hi, Cy!");
  // Recursion, as schema-rendering macros do.
  EXPECT_EQ(render("{% macro count(n) %}{{ n }}{% if n > 0 %}{{ count(n - 1) }}{% endif %}{% endmacro %}{{ count(3) }}"),
            "3210");
  // A macro sees the template's top level, not its caller's loop variables.
  EXPECT_EQ(render("{% set g = 'top' %}{% macro m() %}{{ g }}{{ i }}{% endmacro %}{% for i in [1] %}{{ m() }}{% endfor %}"),
            "top");
  auto e = render_error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "macro 'm' takes not more than 1 argument(s)");
}

TEST(ChatTemplateEvaluator, FilterAndGenerationBlocks) {
  EXPECT_EQ(render("{% filter upper %}abc{{ 'd' }}{% endfilter %}"), "ABCD");
  EXPECT_EQ(render("{% generation %}reply{% endgeneration %}"), "reply");
}

TEST(ChatTemplateEvaluator, RaiseExceptionCarriesTheTemplatesMessage) {
  auto e = render_error("line\n  {{ raise_exception('Conversation roles must alternate user/assistant') }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ct::Error::Kind::raised);
  EXPECT_EQ(e->message(), "Conversation roles must alternate user/assistant");
  EXPECT_EQ(e->line(), 2);
}

TEST(ChatTemplateEvaluator, StrftimeNowUsesTheInjectedClock) {
  ct::Options options;
  options.now = [] {
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    tm.tm_hour = 12;
    return tm;
  };
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y %H:%M') }}", "{}", options), "26 Jul 2024 12:00");
  // Without one, the real clock: this year, not 2024's frozen date.
  const std::time_t t = std::time(nullptr);
  std::tm now{};
  localtime_r(&t, &now);
  EXPECT_EQ(render("{{ strftime_now('%Y') }}"), std::to_string(now.tm_year + 1900));
}

TEST(ChatTemplateEvaluator, RuntimeErrorsNameThePosition) {
  auto e = render_error("\n\n   {{ x.a.b }}", R"({"x": {}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ct::Error::Kind::runtime);
  EXPECT_EQ(e->message(), "'dict object' has no attribute 'a'");
  EXPECT_EQ(e->line(), 3);
  EXPECT_EQ(e->column(), 10);

  e = render_error("{{ 'a' + 1 }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "can only concatenate str (not \"int\") to str");

  e = render_error("{{ nothing() }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "'nothing' is undefined");

  e = render_error("{{ 1 // 0 }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "integer division or modulo by zero");

  e = render_error("{{ 9223372036854775807 + 1 }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "integer overflow");
}

TEST(ChatTemplateEvaluator, MutatingMethodsAreRefusedAsInTheImmutableSandbox) {
  auto e = render_error("{% set l = [] %}{{ l.append(1) }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "access to attribute 'append' of 'list' object is unsafe.");
  e = render_error("{{ d.pop('a') }}", R"({"d": {"a": 1}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "access to attribute 'pop' of 'dict' object is unsafe.");
}

TEST(ChatTemplateEvaluator, SafeStringsEscapeWhatIsAddedToThem) {
  // markupsafe: Markup + str escapes the str (a functionary template relies on it).
  EXPECT_EQ(render("{{ 'a<'|safe + '\"b&' }}|{{ 'x' ~ ('<'|safe) }}"), "a<&#34;b&amp;|x<");
}

TEST(ChatTemplateEvaluator, ComparisonsAndMembership) {
  EXPECT_EQ(render("{{ 1 == 1.0 }}{{ [1, 2] == [1, 2] }}{{ 'b' > 'a' }}{{ 'ell' in 'hello' }}{{ 'k' in {'k': 1} }}"),
            "TrueTrueTrueTrueTrue");
  auto e = render_error("{{ 1 < 'a' }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "'<' not supported between instances of 'int' and 'str'");
}

}  // namespace
