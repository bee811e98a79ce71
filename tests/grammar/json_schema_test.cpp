// JSON Schema to GBNF (engine/grammar/json_schema.h): for each schema of
// json_schema_cases.json, the grammar takes exactly the documents the Python
// jsonschema package validates (json_schema_cases.py wrote the verdicts);
// sampling under a schema's grammar gives documents that parse; unsupported
// keywords and bad schemas are errors naming the keyword and where.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/chat_template/json.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"
#include "tests/grammar/reference_matcher.h"

namespace {

using engine::grammar::json_schema_to_gbnf;
using engine::grammar::SchemaError;

const std::filesystem::path kCases = std::filesystem::path(ENGINE_SOURCE_DIR) / "tests/grammar/json_schema_cases.json";

bool takes(const engine::grammar::Grammar& g, const std::string& text) {
  engine::grammar::testing::ReferenceMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

TEST(JsonSchema, TheGrammarTakesExactlyTheDocumentsJsonschemaValidates) {
  std::ifstream in(kCases);
  ASSERT_TRUE(in) << kCases;
  std::stringstream text;
  text << in.rdbuf();
  const auto cases = engine::chat_template::parse_json(text.str());
  size_t n_docs = 0, n_valid = 0;
  for (const auto& c : cases.list()) {
    const std::string name = c.dict().find("name")->as_string();
    const std::string schema = engine::chat_template::to_json(*c.dict().find("schema"));
    SCOPED_TRACE(name);
    const std::string gbnf = json_schema_to_gbnf(schema);
    const engine::grammar::Grammar g = engine::grammar::parse_gbnf(gbnf);
    for (const auto& d : c.dict().find("documents")->list()) {
      const std::string doc = d.dict().find("text")->as_string();
      const bool valid = d.dict().find("valid")->as_bool();
      EXPECT_EQ(takes(g, doc), valid) << doc << "\n" << gbnf;
      ++n_docs;
      n_valid += valid ? 1 : 0;
    }
  }
  EXPECT_GE(n_docs, 40u);
  EXPECT_GE(n_valid, 15u);
}

TEST(JsonSchema, UnsupportedKeywordsAndBadSchemasAreNamed) {
  auto error = [](std::string_view schema) -> std::string {
    try {
      json_schema_to_gbnf(schema);
    } catch (const SchemaError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error(R"({"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}})"),
            "json schema: the keyword 'pattern' is not supported at '/properties/id'");
  EXPECT_EQ(error(R"({"type": "integer", "minimum": 3})"), "json schema: the keyword 'minimum' is not supported at '/'");
  EXPECT_EQ(error(R"({"type": "strin"})"), "json schema: unknown type 'strin' at '/type'");
  EXPECT_EQ(error(R"({"$ref": "#/$defs/missing"})"), "json schema: '$ref' #/$defs/missing points at nothing at '/$ref'");
  EXPECT_EQ(error(R"({"$ref": "http://example.com/s.json"})"),
            "json schema: '$ref' http://example.com/s.json is not in this document (only '#...' references are) at '/$ref'");
  EXPECT_EQ(error(R"({"type": "object", "properties": {"a": {}}, "required": ["b"]})"),
            "json schema: the required property 'b' is not in 'properties' at '/required'");
  EXPECT_EQ(error(R"({"type": "array", "minItems": 3, "maxItems": 2})"),
            "json schema: 'maxItems' is below 'minItems' at '/'");
  EXPECT_EQ(error("false"), "json schema: the schema 'false' takes no value at '/'");
  EXPECT_EQ(error("{\"type\": "), "json schema: JSON: unexpected end at byte 9");
}

TEST(JsonSchema, AnEmptySchemaTakesAnyJsonValue) {
  const engine::grammar::Grammar g = engine::grammar::parse_gbnf(json_schema_to_gbnf("{}"));
  EXPECT_TRUE(takes(g, R"({"a": [1, 2.5e3, "x", null, true, {}]})"));
  EXPECT_TRUE(takes(g, "\"text\""));
  EXPECT_FALSE(takes(g, "{'a': 1}"));
}

// XML-style tool-call arguments (Qwen3-Coder's syntax here): properties in
// order, optional ones skippable, strings as text (lengths and string enums
// kept), anything else as JSON; two tools share one grammar.
TEST(JsonSchema, XmlArgumentsTakeTextStringsAndJsonOtherwise) {
  const engine::grammar::XmlArgumentSyntax qwen{"<parameter=", ">\n", "\n</parameter>\n"};
  const std::vector<engine::grammar::XmlArguments> tools = {
      {"a-args", R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 8},
                    "days": {"type": "integer"}, "unit": {"enum": ["c", "f"]},
                    "opts": {"type": "object", "properties": {"x": {"type": "boolean"}}}},
                    "required": ["city", "unit"]})"},
      {"b-args", R"({"type": "object", "properties": {"q": {"type": "string"}}})"}};
  const std::string gbnf = engine::grammar::xml_arguments_to_gbnf(tools, qwen);
  const engine::grammar::Grammar a = engine::grammar::parse_gbnf(gbnf, "a-args");
  const engine::grammar::Grammar b = engine::grammar::parse_gbnf(gbnf, "b-args");
  EXPECT_TRUE(takes(a, "<parameter=city>\nOslo\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"));
  EXPECT_TRUE(takes(a, "<parameter=city>\nNew York\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
                       "<parameter=unit>\nf\n</parameter>\n<parameter=opts>\n{\"x\": true}\n</parameter>\n"));
  EXPECT_FALSE(takes(a, "<parameter=city>\nSan Francisco\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"));
  EXPECT_TRUE(takes(a, "<parameter=city>\n\"Oslo\"\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"));  // text
  EXPECT_FALSE(takes(a, "<parameter=unit>\nc\n</parameter>\n"));                                     // city is required
  EXPECT_FALSE(takes(a, "<parameter=city>\nOslo\n</parameter>\n<parameter=unit>\nk\n</parameter>\n"));  // not in the enum
  EXPECT_FALSE(takes(a, "<parameter=city>\nOslo\n</parameter>\n<parameter=days>\nmany\n</parameter>\n"
                        "<parameter=unit>\nc\n</parameter>\n"));
  EXPECT_TRUE(takes(b, ""));
  EXPECT_TRUE(takes(b, "<parameter=q>\nany text, even \"quoted\"\n</parameter>\n"));
  EXPECT_FALSE(takes(b, "<parameter=q>\na <tag>\n</parameter>\n"));
  EXPECT_THROW(engine::grammar::xml_arguments_to_gbnf(
                   std::vector<engine::grammar::XmlArguments>{{"c", R"({"type": "object", "additionalProperties": true})"}},
                   qwen),
               SchemaError);
  EXPECT_THROW(engine::grammar::xml_arguments_to_gbnf(
                   std::vector<engine::grammar::XmlArguments>{{"c", R"({"type": "array"})"}}, qwen),
               SchemaError);
}

}  // namespace
