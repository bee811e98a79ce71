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
                                 ToolCallFormat::mistral, ToolCallFormat::gemma4, ToolCallFormat::pythonic}) {
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
