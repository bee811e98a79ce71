// Structured output through the C API (engine.h, "structured output") and the
// C++ wrapper, on stories260K, a model that has never seen JSON: with a
// grammar every reply, greedy or sampled, is a whole sentence of it ended by
// the end-of-generation token; engine_sample advances the grammar and
// engine_sampler_accept (prompt tokens) does not; a grammar that does not
// parse is refused with its line and column and the sampler keeps its own;
// NULL removes it. And a reply's tool calls read back (engine_chat_parse_tool_calls).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/chat_template/json.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"
#include "tests/api/session_models.h"
#include "tests/grammar/reference_matcher.h"

namespace {

using session_test::Which;

constexpr const char* kRecord =
    R"(root ::= "{\"name\": \"" [a-z ]{1,12} "\", \"age\": " [1-9] [0-9]? "}")";

bool whole_sentence(const char* gbnf, const std::string& text) {
  const engine::grammar::Grammar g = engine::grammar::parse_gbnf(gbnf);
  engine::grammar::testing::ReferenceMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

engine::api::Model& model() { return session_test::Models::get(Which::llama); }

// Room for what a grammar allows: a whitespace position takes up to 21
// characters, which a model that has never seen JSON sometimes uses.
engine::api::Reply reply_with(engine::api::Sampler& sampler, uint32_t max_tokens = 120) {
  engine::api::Session session = session_test::session(Which::llama, /*n_batch=*/32, /*n_ctx=*/max_tokens + 64);
  session.prefill_chat({{"user", "Who is Lily?", {}, "", ""}});
  engine::api::GenerateOptions options;
  options.max_tokens = max_tokens;
  return engine::api::generate(session, sampler, options);
}

TEST(Grammar, GreedyAndSampledRepliesAreWholeSentences) {
  engine_sampler_params p = engine_sampler_default_params();
  p.temperature = 0;
  engine::api::Sampler greedy(p);
  greedy.set_grammar(model(), kRecord);
  const engine::api::Reply r = reply_with(greedy);
  EXPECT_EQ(r.reason, ENGINE_CHAT_END_OF_GENERATION) << r.text;
  EXPECT_TRUE(whole_sentence(kRecord, r.text)) << r.text;

  for (uint32_t seed = 1; seed <= 4; ++seed) {
    engine_sampler_params q = engine_sampler_default_params();
    q.temperature = 1.2f;
    q.seed = seed;
    engine::api::Sampler sampler(q);
    sampler.set_grammar(model(), kRecord);
    const engine::api::Reply s = reply_with(sampler);
    EXPECT_EQ(s.reason, ENGINE_CHAT_END_OF_GENERATION) << s.text;
    EXPECT_TRUE(whole_sentence(kRecord, s.text)) << "seed " << seed << ": " << s.text;
  }

  // The same sampler again: the grammar starts over for the next reply.
  const engine::api::Reply again = reply_with(greedy);
  EXPECT_EQ(again.text, r.text);
}

TEST(Grammar, EngineSampleAdvancesTheGrammarAndPromptTokensDoNot) {
  const char* yes_no = R"(root ::= " " ("yes" | "no") ".")";
  engine_sampler_params p = engine_sampler_default_params();
  p.seed = 7;
  engine::api::Sampler sampler(p);
  sampler.set_grammar(model(), yes_no);
  engine::api::Session session = session_test::session(Which::llama, 32, 128);
  const std::vector<int32_t> prompt = model().tokenize("Once upon a time, was there a cat? Answer:", true, false);
  session.prefill(prompt);
  for (const int32_t t : prompt) sampler.accept(t);  // the penalty's context, not the grammar's
  std::vector<int32_t> reply;
  for (int i = 0; i < 20; ++i) {
    const int32_t t = sampler.sample(session);
    if (model().is_end_of_generation(t)) break;
    reply.push_back(t);
    session.decode(t);
  }
  std::string text;
  for (const int32_t t : reply) text += model().piece(t);
  EXPECT_TRUE(whole_sentence(yes_no, text)) << text;
}

TEST(Grammar, ABadGrammarIsRefusedWithItsLineAndTheSamplerKeepsItsOwn) {
  engine_sampler_params p = engine_sampler_default_params();
  p.temperature = 0;
  engine::api::Sampler sampler(p);
  sampler.set_grammar(model(), kRecord);
  const char* bad = "root ::= \"{\" value\n";
  EXPECT_EQ(engine_sampler_set_grammar(sampler.get(), model().get(), bad, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(engine_last_error(),
               "engine_sampler_set_grammar: grammar: line 1, column 14: rule 'value' is used but not defined");
  EXPECT_EQ(engine_sampler_set_grammar(sampler.get(), model().get(), "a ::= \"x\"\n", "b"),
            ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(engine_last_error(), "engine_sampler_set_grammar: grammar: no rule 'b' (the start rule)");
  const engine::api::Reply r = reply_with(sampler);
  EXPECT_TRUE(whole_sentence(kRecord, r.text)) << r.text;

  // NULL removes the grammar: the model's own reply (stories, not records).
  EXPECT_EQ(engine_sampler_set_grammar(sampler.get(), nullptr, nullptr, nullptr), ENGINE_OK);
  const engine::api::Reply free = reply_with(sampler);
  EXPECT_FALSE(whole_sentence(kRecord, free.text)) << free.text;
  EXPECT_EQ(engine_sampler_set_grammar(nullptr, model().get(), kRecord, nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_sampler_set_grammar(sampler.get(), nullptr, kRecord, nullptr), ENGINE_ERR_INVALID_HANDLE);
}

TEST(Grammar, AJsonSchemaGivesDocumentsItValidates) {
  const char* schema = R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                           "happy": {"type": "boolean"}, "friends": {"type": "array", "items": {"type": "string",
                           "maxLength": 8}, "maxItems": 2}}, "required": ["name", "happy"]})";
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    engine_sampler_params p = engine_sampler_default_params();
    p.seed = seed;
    engine::api::Sampler sampler(p);
    sampler.set_json_schema(model(), schema);
    const engine::api::Reply r = reply_with(sampler);
    EXPECT_EQ(r.reason, ENGINE_CHAT_END_OF_GENERATION) << r.text;
    const std::string gbnf = engine::grammar::json_schema_to_gbnf(schema);
    EXPECT_TRUE(whole_sentence(gbnf.c_str(), r.text)) << r.text;
    const engine::chat_template::Value doc = engine::chat_template::parse_json(r.text);  // throws if not JSON
    ASSERT_TRUE(doc.is_dict()) << r.text;
    ASSERT_NE(doc.dict().find("name"), nullptr) << r.text;
    EXPECT_LE(engine::chat_template::utf8_length(doc.dict().find("name")->as_string()), 10u) << r.text;
    ASSERT_NE(doc.dict().find("happy"), nullptr) << r.text;
    EXPECT_TRUE(doc.dict().find("happy")->is_bool()) << r.text;
  }
  engine::api::Sampler sampler;
  EXPECT_EQ(engine_sampler_set_json_schema(sampler.get(), model().get(), R"({"type": "string", "format": "email"})"),
            ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(engine_last_error(),
               "engine_sampler_set_json_schema: json schema: the keyword 'format' is not supported at '/'");
}

TEST(ToolCalls, ARepliesCallsComeBackThroughTheCApi) {
  const std::string reply = "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                            "</tool_call>";
  engine_chat_parsed* p = nullptr;
  ASSERT_EQ(engine_chat_parse_tool_calls(model().get(), "hermes", reply.c_str(), &p), ENGINE_OK) << engine_last_error();
  EXPECT_STREQ(p->content, "Checking.");
  EXPECT_STREQ(p->format, "hermes");
  ASSERT_EQ(p->n_tool_calls, 1u);
  EXPECT_EQ(p->tool_calls[0].id, nullptr);
  EXPECT_STREQ(p->tool_calls[0].name, "get_weather");
  EXPECT_STREQ(p->tool_calls[0].arguments, "{\"city\": \"Paris\"}");
  engine_chat_parsed_free(p);

  // stories260K has no template: the built-in ChatML stands in, which writes
  // calls as <tool_call> blocks.
  const engine::api::ParsedReply own = engine::api::parse_tool_calls(model(), reply);
  EXPECT_EQ(own.format, "hermes");
  EXPECT_EQ(own.content, "Checking.");
  ASSERT_EQ(own.tool_calls.size(), 1u);
  EXPECT_EQ(own.tool_calls[0].name, "get_weather");
  const engine::api::ParsedReply none = engine::api::parse_tool_calls(model(), reply, "none");
  EXPECT_EQ(none.content, reply);
  EXPECT_TRUE(none.tool_calls.empty());
  const engine::api::ParsedReply mistral =
      engine::api::parse_tool_calls(model(), "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}", "mistral");
  ASSERT_EQ(mistral.tool_calls.size(), 1u);
  EXPECT_EQ(mistral.tool_calls[0].arguments, "{\"city\": \"Oslo\"}");

  EXPECT_EQ(engine_chat_parse_tool_calls(model().get(), "xml", reply.c_str(), &p), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_STREQ(engine_last_error(), "engine_chat_parse_tool_calls: unknown tool-call format 'xml'");
  EXPECT_EQ(engine_chat_parse_tool_calls(model().get(), nullptr, nullptr, &p), ENGINE_ERR_INVALID_ARGUMENT);
  engine_chat_parsed_free(nullptr);  // nothing to free: fine
}

// A reply under the tool grammar is a call of one of the tools, in the
// model's format (ChatML's <tool_call> here) or a named one, that reads back
// into a call whose arguments the tool's schema validates.
TEST(ToolCalls, AToolGrammarGivesACallThatReadsBack) {
  const char* tools = R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                    "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"]}}},
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}])";
  for (const char* format : {"", "llama3", "mistral", "list", "functools", "qwen3_coder", "glm"}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(std::string("format '") + format + "', seed " + std::to_string(seed));
      engine_sampler_params p = engine_sampler_default_params();
      p.seed = seed;
      engine::api::Sampler sampler(p);
      sampler.set_tool_grammar(model(), tools, format);
      const engine::api::Reply r = reply_with(sampler, 600);
      EXPECT_EQ(r.reason, ENGINE_CHAT_END_OF_GENERATION) << r.text;
      const engine::api::ParsedReply back = engine::api::parse_tool_calls(model(), r.text, format);
      ASSERT_EQ(back.tool_calls.size(), 1u) << r.text;
      const auto args = engine::chat_template::parse_json(back.tool_calls[0].arguments);
      if (back.tool_calls[0].name == "get_weather") {
        EXPECT_TRUE(args.dict().find("city")->is_string()) << r.text;
        const std::string unit = args.dict().find("unit")->as_string();
        EXPECT_TRUE(unit == "celsius" || unit == "fahrenheit") << r.text;
      } else {
        EXPECT_EQ(back.tool_calls[0].name, "add") << r.text;
        EXPECT_TRUE(args.dict().find("a")->is_int() && args.dict().find("b")->is_int()) << r.text;
      }
    }
  }
  engine::api::Sampler sampler;
  EXPECT_EQ(engine_sampler_set_tool_grammar(sampler.get(), model().get(), tools, "gemma4"), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(engine_last_error(), "engine_sampler_set_tool_grammar: tool calls in the gemma4 format cannot be "
                                    "constrained");
  EXPECT_EQ(engine_sampler_set_tool_grammar(sampler.get(), model().get(), "[{\"type\": \"function\"}]", nullptr),
            ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(engine_last_error(), "engine_sampler_set_tool_grammar: tools: tool 0 has no function name");
}

}  // namespace
