// Tool calls read back from replies (engine/chat/tool_calls.h): every chat
// template of ../shared/chat-templates whose text shows a tool-call format
// renders the "tools" conversation's call (get_weather, Paris, celsius) in it,
// as jinja2 rendered it; that rendering, read back, gives the call. Then the
// variations models write: several calls, text around them, a cut reply, and
// calls that do not parse staying in the content.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "engine/chat/tool_calls.h"
#include "engine/chat_template/json.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
using engine::chat::parse_tool_calls;
using engine::chat::ParsedReply;
using engine::chat::ToolCallFormat;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool same_json(const std::string& a, const std::string& b) {
  return engine::chat_template::equals(engine::chat_template::parse_json(a), engine::chat_template::parse_json(b));
}

TEST(ToolCalls, TheSharedTemplatesRenderingsReadBack) {
  const fs::path root = engine_test::shared_dir() / "chat-templates";
  if (!fs::is_directory(root / "templates")) GTEST_SKIP() << "missing shared folder " << root.string();
  std::map<ToolCallFormat, std::set<std::string>> found;
  for (const auto& entry : fs::directory_iterator(root / "templates")) {
    const std::string name = entry.path().stem().string();
    const ToolCallFormat f = engine::chat::tool_call_format(read(entry.path()));
    if (f == ToolCallFormat::none) continue;
    SCOPED_TRACE(name + " (" + std::string(engine::chat::tool_call_format_name(f)) + ")");
    const auto expected = engine::chat_template::parse_json(read(root / "expected" / (name + ".json")));
    const auto* c = expected.dict().find("cases")->dict().find("tools");
    ASSERT_NE(c, nullptr);
    const auto* output = c->dict().find("output");
    if (output == nullptr) continue;  // jinja2 itself failed on it (FireFunction v2 wants `functions`)
    const std::string& text = output->as_string();
    // The assistant's turn: between the question and the tool's result.
    const size_t from = text.find("What's the weather in Paris?");
    const size_t to = text.find("18", from);
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    std::string turn = text.substr(from, to - from);
    if (f == ToolCallFormat::llama3) {  // its reply is the whole assistant message
      const size_t start = turn.find("assistant<|end_header_id|>\n\n") + 28;
      turn = turn.substr(start, turn.find("<|eot_id|>", start) - start);
    }
    const ParsedReply r = parse_tool_calls(turn, f);
    EXPECT_EQ(r.tool_calls.size(), 1u) << turn;
    if (r.tool_calls.size() != 1) continue;
    EXPECT_EQ(r.tool_calls[0].name, "get_weather");
    EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"city": "Paris", "unit": "celsius"})")) << r.tool_calls[0].arguments;
    if (turn.find("\"id\"") != std::string::npos) {
      EXPECT_EQ(r.tool_calls[0].id, "abcDEF123");
    }
    found[f].insert(name);
  }
  for (const ToolCallFormat f : {ToolCallFormat::hermes, ToolCallFormat::list, ToolCallFormat::llama3,
                                 ToolCallFormat::mistral, ToolCallFormat::gemma4, ToolCallFormat::pythonic,
                                 ToolCallFormat::qwen3_coder, ToolCallFormat::glm, ToolCallFormat::invoke}) {
    EXPECT_FALSE(found[f].empty()) << "no template of format " << engine::chat::tool_call_format_name(f);
  }
  std::string list;
  for (const auto& [f, names] : found) {
    list += std::string(engine::chat::tool_call_format_name(f)) + ":";
    for (const std::string& n : names) list += " " + n;
    list += "\n";
  }
  RecordProperty("formats", list);
}

// The XML-style formats: a string is written as itself and anything else
// as JSON, the wrappers are not content, and a value cut off stays content.
TEST(ToolCalls, XmlStyleFormats) {
  ParsedReply r = parse_tool_calls(
      "I'll check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"metric\": true}\n</parameter>\n</function>\n"
      "</tool_call>\n<tool_call>\n<function=now>\n</function>\n</tool_call>",
      ToolCallFormat::qwen3_coder);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.content, "I'll check.");
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"city": "New York", "days": 3, "opts": {"metric": true}})"))
      << r.tool_calls[0].arguments;
  EXPECT_EQ(r.tool_calls[1].name, "now");
  EXPECT_EQ(r.tool_calls[1].arguments, "{}");
  r = parse_tool_calls("<seed:tool_call>\n<function=f>\n<parameter=q>two\nlines</parameter>\n</function>\n</seed:tool_call>",
                       ToolCallFormat::qwen3_coder);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"q": "two\nlines"})")) << r.tool_calls[0].arguments;
  EXPECT_EQ(r.content, "");
  const std::string cut = "<tool_call>\n<function=f>\n<parameter=q>\nunfini";
  r = parse_tool_calls(cut, ToolCallFormat::qwen3_coder);
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.content, cut);

  r = parse_tool_calls("<tool_call>search<arg_key>q</arg_key><arg_value>cats</arg_value>"
                       "<arg_key>n</arg_key><arg_value>5</arg_value></tool_call>",
                       ToolCallFormat::glm);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "search");
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"q": "cats", "n": 5})")) << r.tool_calls[0].arguments;
  r = parse_tool_calls("<tool_call>search<arg_key>q</arg_key></tool_call>", ToolCallFormat::glm);
  EXPECT_TRUE(r.tool_calls.empty());  // a key without its value

  // DeepSeek says which values are strings: "5" stays text where string="true".
  r = parse_tool_calls(
      "Sure.\n\n<\uFF5CDSML\uFF5Cfunction_calls>\n<\uFF5CDSML\uFF5Cinvoke name=\"f\">\n"
      "<\uFF5CDSML\uFF5Cparameter name=\"a\" string=\"true\">5</\uFF5CDSML\uFF5Cparameter>\n"
      "<\uFF5CDSML\uFF5Cparameter name=\"b\" string=\"false\">[1, 2]</\uFF5CDSML\uFF5Cparameter>\n"
      "</\uFF5CDSML\uFF5Cinvoke>\n</\uFF5CDSML\uFF5Cfunction_calls>",
      ToolCallFormat::invoke);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.content, "Sure.");
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"a": "5", "b": [1, 2]})")) << r.tool_calls[0].arguments;
  r = parse_tool_calls("<minimax:tool_call>\n<invoke name=\"g\">\n<parameter name=\"x\">hi</parameter>\n</invoke>\n"
                       "</minimax:tool_call>",
                       ToolCallFormat::invoke);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "g");
  EXPECT_EQ(r.content, "");
  r = parse_tool_calls("No tools needed.", ToolCallFormat::invoke);
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.content, "No tools needed.");
}

TEST(ToolCalls, SeveralCallsTextAroundThemAndCutReplies) {
  ParsedReply r = parse_tool_calls(
      "Let me look.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
      ToolCallFormat::hermes);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.content, "Let me look.");
  EXPECT_EQ(r.tool_calls[1].name, "b");
  EXPECT_EQ(r.tool_calls[1].arguments, "{}");

  // A call that does not parse stays in the content, nothing lost.
  r = parse_tool_calls("<tool_call>{\"name\": \"a\", \"argu</tool_call> done", ToolCallFormat::hermes);
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.content, "<tool_call>{\"name\": \"a\", \"argu</tool_call> done");
  // A reply cut before the closing marker still gives a call that is whole.
  r = parse_tool_calls("<tool_call>{\"name\": \"a\", \"arguments\": {\"q\": \"x\"}}\n", ToolCallFormat::hermes);
  ASSERT_EQ(r.tool_calls.size(), 1u);

  r = parse_tool_calls("{\"name\": \"a\", \"parameters\": {\"n\": 2}}; {\"name\": \"b\", \"parameters\": {}}",
                       ToolCallFormat::llama3);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"n\": 2}");
  r = parse_tool_calls("Paris is sunny.", ToolCallFormat::llama3);
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.content, "Paris is sunny.");

  r = parse_tool_calls("[TOOL_CALLS]a[ARGS]{\"x\": [1, 2]}[TOOL_CALLS]b[ARGS]{}", ToolCallFormat::mistral);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"x\": [1, 2]}");
  EXPECT_EQ(r.tool_calls[1].name, "b");

  r = parse_tool_calls("<|tool_call>call:f{s:<|\"|>a, b<|\"|>,n:-1.5,ok:true,l:[1,<|\"|>x<|\"|>],o:{k:null}}<tool_call|>",
                       ToolCallFormat::gemma4);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"s": "a, b", "n": -1.5, "ok": true, "l": [1, "x"], "o": {"k": null}})"))
      << r.tool_calls[0].arguments;

  r = parse_tool_calls("<|tool_call_start|>[f(s='it\\'s', n=3, b=True, l=[1, \"x\"]), g()]<|tool_call_end|>",
                       ToolCallFormat::pythonic);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_TRUE(same_json(r.tool_calls[0].arguments, R"({"s": "it's", "n": 3, "b": true, "l": [1, "x"]})"))
      << r.tool_calls[0].arguments;
  EXPECT_EQ(r.tool_calls[1].name, "g");

  r = parse_tool_calls("functools[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]",
                       ToolCallFormat::functools);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.content, "");
}

}  // namespace
