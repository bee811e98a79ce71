// Filters, tests and methods with jinja2's and Python's meanings.
#include <gtest/gtest.h>

#include "tests/chat_template/render.h"

namespace {

using chat_template_test::render;
using chat_template_test::render_error;

TEST(ChatTemplateFilters, Strings) {
  EXPECT_EQ(render("[{{ '  a b  ' | trim }}][{{ 'xxaxx' | trim('x') }}][{{ 'Ab' | lower }}{{ 'Ab' | upper }}]"),
            "[a b][a][abAB]");
  EXPECT_EQ(render("{{ 'a-b-a' | replace('a', 'c') }} {{ 'hello world' | title }} {{ 'hELLO' | capitalize }}"),
            "c-b-c Hello World Hello");
  EXPECT_EQ(render("{{ 3 | string ~ 'x' }}{{ 'héé' | length }}{{ 'a b  c' | wordcount }}"), "3x33");
}

TEST(ChatTemplateFilters, DefaultReplacesUndefinedOrFalsy) {
  EXPECT_EQ(render("{{ x | default('d') }}|{{ '' | default('d') }}|{{ '' | default('d', true) }}|{{ y | d(1) }}"),
            "d||d|1");
}

TEST(ChatTemplateFilters, Tojson) {
  const std::string vars = R"({"x": {"b": "é\"\n", "a": [1, 2.5, true, null]}})";
  EXPECT_EQ(render("{{ x | tojson }}", vars), R"({"b": "é\"\n", "a": [1, 2.5, true, null]})");
  EXPECT_EQ(render("{{ x | tojson(indent=2) }}", vars),
            "{\n  \"b\": \"é\\\"\\n\",\n  \"a\": [\n    1,\n    2.5,\n    true,\n    null\n  ]\n}");
  EXPECT_EQ(render("{{ x | tojson(sort_keys=true) }}", vars), R"({"a": [1, 2.5, true, null], "b": "é\"\n"})");
  EXPECT_EQ(render("{{ x.a | tojson(separators=(',', ':')) }}", vars), "[1,2.5,true,null]");
  EXPECT_EQ(render("{{ {1: 2} | tojson }}"), R"({"1": 2})");
}

TEST(ChatTemplateFilters, Sequences) {
  EXPECT_EQ(render("{{ [3, 1, 2] | sort | join(',') }} {{ ['b', 'A'] | sort | first }} {{ [1, 2] | last }}"), "1,2,3 A 2");
  EXPECT_EQ(render("{{ ['a', 'A', 'b'] | unique | list }} {{ [4, 2, 9] | min }} {{ [4, 2, 9] | max }} {{ [1, 2] | sum }}"),
            "['a', 'b'] 2 9 3");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | dictsort }} {{ {'k': 1} | items | list }}"), "[('a', 2), ('b', 1)] [('k', 1)]");
  EXPECT_EQ(render("{{ [1, 2] | reverse | list }} {{ 'abc' | list }}"), "[2, 1] ['a', 'b', 'c']");
}

TEST(ChatTemplateFilters, SelectMapAndAttributes) {
  const std::string vars = R"({"m": [{"role": "user", "n": 1}, {"role": "system", "n": 2}, {"role": "user", "n": 3}]})";
  EXPECT_EQ(render("{{ m | selectattr('role', 'equalto', 'user') | map(attribute='n') | join(',') }}", vars), "1,3");
  EXPECT_EQ(render("{{ m | rejectattr('role', 'equalto', 'user') | list | length }}", vars), "1");
  EXPECT_EQ(render("{{ ['a', 'b'] | map('upper') | join }} {{ [1, 0, 2] | select | list }} {{ [1, 2] | reject('odd') | list }}"),
            "AB [1, 2] [2]");
  EXPECT_EQ(render("{{ m | sort(attribute='n', reverse=true) | map(attribute='n') | list }}", vars), "[3, 2, 1]");
  EXPECT_EQ(render("{{ none | selectattr('x') | list }}"), "[]");  // jinja2 checks `if seq` first
}

TEST(ChatTemplateFilters, IndentAndNumbers) {
  EXPECT_EQ(render("{{ 'a\nb\n\nc' | indent(2) }}"), "a\n  b\n\n  c");
  EXPECT_EQ(render("{{ 'a\nb' | indent(2, first=true) }}"), "  a\n  b");
  EXPECT_EQ(render("{{ '42' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }} {{ 2.567 | round(2) }} {{ -3 | abs }}"),
            "43 0 2.5 2.57 3");
}

TEST(ChatTemplateFilters, UnknownFilterIsARuntimeError) {
  auto e = render_error("{{ 'x' | from_json }}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message(), "No filter named 'from_json'.");
  // In a branch not taken it is never applied (jinja2 renders such templates).
  EXPECT_EQ(render("{% if false %}{{ 'x' | from_json }}{% endif %}ok"), "ok");
}

TEST(ChatTemplateTests, TypeTests) {
  EXPECT_EQ(render("{{ x is defined }}{{ y is defined }}{{ x is string }}{{ {} is mapping }}{{ [] is iterable }}"
                   "{{ none is none }}{{ true is boolean }}{{ 1 is number }}{{ 1 is integer }}{{ 1.5 is float }}",
                   R"({"x": "s"})"),
            "TrueFalseTrueTrueTrueTrueTrueTrueTrueTrue");
  EXPECT_EQ(render("{{ y is iterable }}{{ y is sequence }}{{ 'a' is mapping }}{{ true is integer }}"), "TrueTrueFalseFalse");
  EXPECT_EQ(render("{{ 3 is odd }}{{ 4 is divisibleby 2 }}{{ 'a' is equalto 'a' }}{{ 2 is in [1, 2] }}{{ x is not none }}"),
            "TrueTrueTrueTrueTrue");
}

TEST(ChatTemplateMethods, StringMethods) {
  EXPECT_EQ(render("{{ ' a '.strip() }}|{{ 'xa'.lstrip('x') }}|{{ 'ax\n'.rstrip() }}|{{ 'a,b,,c'.split(',') }}|"
                   "{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a/b/c'.rsplit('/', 1) }}"),
            "a|a|ax|['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a/b', 'c']");
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'aXa'.replace('a', 'b') }}"
                   "{{ 'ab'.upper() }}{{ 'hi there'.title() }}{{ 'abcb'.find('b') }}{{ 'abab'.count('ab') }}{{ '-'.join(['a', 'b']) }}"),
            "TrueTruebXbABHi There12a-b");
}

TEST(ChatTemplateMethods, DictMethods) {
  const std::string vars = R"({"d": {"a": 1, "b": 2}})";
  EXPECT_EQ(render("{{ d.get('a') }}{{ d.get('z') }}{{ d.get('z', 5) }}{{ d.keys() | list }}{{ d.values() | list }}"
                   "{{ d['b'] }}{{ d.items() | list }}",
                   vars),
            "1None5['a', 'b'][1, 2]2[('a', 1), ('b', 2)]");
}

}  // namespace
