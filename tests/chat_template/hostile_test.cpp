// Templates come from model files: one written to exhaust the renderer must
// end in Error(limit) naming the bound it hit, quickly, without exhausting
// memory or the native stack.
#include <gtest/gtest.h>

#include "tests/chat_template/render.h"

namespace {

using chat_template_test::render;
using chat_template_test::render_error;
namespace ct = engine::chat_template;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

void expect_limit(const std::optional<ct::Error>& e, const std::string& bound) {
  ASSERT_TRUE(e) << "rendered instead of hitting " << bound;
  EXPECT_EQ(e->kind(), ct::Error::Kind::limit) << e->what();
  EXPECT_NE(e->message().find(bound), std::string::npos) << e->what();
}

TEST(ChatTemplateHostile, DeeplyNestedStatements) {
  expect_limit(render_error(repeat("{% if true %}", 100000) + "x" + repeat("{% endif %}", 100000)), "max_depth");
  expect_limit(render_error(repeat("{% for i in [1] %}", 5000)), "max_depth");
}

TEST(ChatTemplateHostile, DeeplyNestedExpressions) {
  expect_limit(render_error("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}"), "max_depth");
  expect_limit(render_error("{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}"), "max_depth");
  expect_limit(render_error("{{ " + repeat("not ", 100000) + "1 }}"), "max_depth");
  expect_limit(render_error("{{ " + repeat("-", 100000) + "1 }}"), "max_depth");
  // Chains are parsed by loops; their depth is bounded all the same.
  expect_limit(render_error("{{ 1" + repeat(" + 1", 100000) + " }}"), "max_depth");
  expect_limit(render_error("{{ 'a'" + repeat(" | trim", 100000) + " }}"), "max_depth");
  expect_limit(render_error("{{ x" + repeat(".a", 100000) + " }}"), "max_depth");
  // Within the bound a long chain is fine.
  EXPECT_EQ(render("{{ 0" + repeat(" + 1", 150) + " }}"), "150");
}

TEST(ChatTemplateHostile, HugeLoops) {
  ct::Options fewer;  // the default bound's logic, reached sooner
  fewer.limits.max_loop_iterations = 100000;
  expect_limit(render_error("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", "{}", fewer),
               "max_loop_iterations");
  expect_limit(render_error("{% for i in range(1000000000000) %}{% endfor %}"), "max_loop_iterations");
  expect_limit(render_error("{% set l = [1] * 1000000000 %}"), "max_loop_iterations");
}

TEST(ChatTemplateHostile, RecursionThroughMacros) {
  expect_limit(render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), "max_eval_depth");
  expect_limit(render_error("{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n + 1) }}{% endmacro %}{{ a(0) }}"),
               "max_eval_depth");
}

TEST(ChatTemplateHostile, HugeOutput) {
  ct::Options small;
  small.limits.max_output_bytes = 1 << 20;
  expect_limit(render_error("{% for i in range(200000) %}xxxxxxxxxx{% endfor %}", "{}", small), "max_output_bytes");
  // Doubling a string: each step is cheap, the result would not be.
  expect_limit(render_error("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                            "{}", small),
               "max_output_bytes");
  expect_limit(render_error("{{ 'x' * 100000000 }}", "{}", small), "max_output_bytes");
  expect_limit(render_error("{% set s = 'x' * 1000000 %}{{ s.replace('x', s) }}", "{}", small), "max_output_bytes");
  // One big string many times in a list: printing or dumping it is bounded too.
  expect_limit(render_error("{% set s = 'x' * 500000 %}{% set l = [s] * 1000 %}{{ l }}", "{}", small), "max_output_bytes");
  expect_limit(render_error("{% set s = 'x' * 500000 %}{% set l = [s] * 1000 %}{{ l | tojson }}", "{}", small),
               "max_output_bytes");
}

TEST(ChatTemplateHostile, ListsBuiltCountAsSteps) {
  ct::Options few;
  few.limits.max_steps = 100000;
  expect_limit(render_error("{% for i in range(100) %}{% set l = range(50000) %}{% endfor %}", "{}", few), "max_steps");
}

TEST(ChatTemplateHostile, Steps) {
  ct::Options few;
  few.limits.max_steps = 10000;
  expect_limit(render_error("{% for i in range(100000) %}{{ i }}{% endfor %}", "{}", few), "max_steps");
}

TEST(ChatTemplateHostile, SelfReferenceLeavesNoCycle) {
  // A namespace holding itself: rendered (and printed) without leaking (the
  // sanitizer build checks) or recursing forever.
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.me = ns %}{% set ns.l = [ns] %}ok"), "ok");
  expect_limit(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"), "nests deeper than 512");
}

TEST(ChatTemplateHostile, NoFileOrEnvironmentAccess) {
  // jinja2's include/import/extends and Python's attributes do not exist here.
  EXPECT_NE(render_error("{% include '/etc/passwd' %}"), std::nullopt);
  EXPECT_NE(render_error("{% import 'os' as os %}"), std::nullopt);
  EXPECT_EQ(render("{{ ''.__class__ }}{{ cycler }}{{ lipsum }}{{ self }}"), "");
}

}  // namespace
