// Messages rendered into prompts (engine/chat/messages.h) by real templates and
// by the built-in ones, against what jinja2 made of ../shared/chat-templates'
// conversations. The conversations are read into engine::chat::Message (tool
// call arguments as JSON text, as an app passes them), so the test covers the
// messages' translation into template values as well as the templates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/chat/builtin_templates.h"
#include "engine/chat/messages.h"
#include "engine/chat_template/chat_template.h"
#include "engine/chat_template/json.h"
#include "engine/support/error.h"
#include "tests/support/frozen_clock.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
namespace ct = engine::chat_template;
using engine::chat::Message;
using engine::chat::RenderOptions;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string text_of(const ct::Value* v) { return v != nullptr && v->is_string() ? v->as_string() : ""; }

struct Conversation {
  std::vector<Message> messages;
  RenderOptions options;
};

// A conversation file as an app would hold it.
Conversation load(const fs::path& path) {
  const ct::Value c = ct::parse_json(read(path));
  Conversation out;
  for (const ct::Value& m : c.dict().find("messages")->list()) {
    const ct::ValueDict& d = m.dict();
    Message msg{text_of(d.find("role")), text_of(d.find("content")), {}, text_of(d.find("tool_call_id")),
                text_of(d.find("name"))};
    if (const ct::Value* calls = d.find("tool_calls")) {
      for (const ct::Value& call : calls->list()) {
        const ct::ValueDict& f = call.dict().find("function")->dict();
        msg.tool_calls.push_back({text_of(call.dict().find("id")), text_of(f.find("name")),
                                  ct::to_json(*f.find("arguments"))});
      }
    }
    out.messages.push_back(std::move(msg));
  }
  out.options.add_generation_prompt = c.dict().find("add_generation_prompt")->as_bool();
  out.options.bos_token = text_of(c.dict().find("bos_token"));
  out.options.eos_token = text_of(c.dict().find("eos_token"));
  if (const ct::Value* tools = c.dict().find("tools")) out.options.tools = ct::to_json(*tools);
  if (const ct::Value* extra = c.dict().find("extra")) out.options.variables = ct::to_json(*extra);
  return out;
}

// strftime_now() as make_expected.py froze it.
ct::Options frozen_clock() {
  ct::Options o;
  o.now = engine_test::frozen_now;
  return o;
}

// What jinja2 made of `conversation` with the template of expected/<name>.json.
struct Expected {
  bool raised = false;
  std::string text;  // the output, or the template's message
};
Expected expected(const fs::path& root, const std::string& name, const std::string& conversation) {
  const ct::Value e = ct::parse_json(read(root / "expected" / (name + ".json")));
  const ct::ValueDict& c = e.dict().find("cases")->dict().find(conversation)->dict();
  if (const ct::Value* out = c.find("output")) return {false, out->as_string()};
  return {true, c.find("error")->as_string()};
}

// Renders the conversation with `source`: the output, or the message raised.
Expected render(const std::string& source, const Conversation& c) {
  try {
    return {false, engine::chat::render(ct::Template(source, frozen_clock()), c.messages, c.options)};
  } catch (const ct::Error& e) {
    return {true, e.message()};
  }
}

const char* const kConversations[] = {"closed-turn", "empty-system", "single-turn", "system-multi-turn",
                                      "thinking-off", "tools", "two-users", "unicode"};

// The chat-templates folder of ../shared, or an empty path.
fs::path root_or_skip() {
  const fs::path root = engine_test::shared_dir() / "chat-templates";
  std::error_code ec;
  return fs::is_directory(root / "expected", ec) ? root : fs::path();
}

#define REQUIRE_CHAT_TEMPLATES(root)                                                                        \
  const fs::path root = root_or_skip();                                                                     \
  if (root.empty()) {                                                                                       \
    GTEST_SKIP() << "missing shared folder " << (engine_test::shared_dir() / "chat-templates").string()   \
                 << " (set ENGINE_SHARED_DIR to the ../shared folder)";                                     \
  }

// Real templates, including tool calls and results, and templates that raise.
TEST(Messages, RenderAsJinja2WithRealTemplates) {
  REQUIRE_CHAT_TEMPLATES(root);
  for (const char* name : {"Qwen-Qwen2.5-7B-Instruct", "meta-llama-Llama-3.1-8B-Instruct", "google-gemma-2-2b-it",
                           "NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "Qwen-Qwen3-0.6B",
                           "mistralai-Mistral-Nemo-Instruct-2407", "ibm-granite-granite-3.3-2B-Instruct"}) {
    const std::string source = read(root / "templates" / (std::string(name) + ".jinja"));
    for (const char* conv : kConversations) {
      SCOPED_TRACE(std::string(name) + " x " + conv);
      const Expected want = expected(root, name, conv);
      const Conversation c = load(root / "conversations" / (std::string(conv) + ".json"));
      const Expected got = render(source, c);
      EXPECT_EQ(got.raised, want.raised);
      EXPECT_EQ(got.text, want.text);
    }
  }
}

// Each built-in template against its family's real one. Conversations left
// out are where the real template does something a fallback should not: a
// default system prompt naming its model (Qwen 2.5), a refusal of system
// prompts or of two user turns in a row (Gemma 2), tool results dropped
// (Phi-3.5), tools described in XML (Qwen3-Coder).
struct Family {
  const char* builtin;
  const char* reference;
  std::vector<const char*> conversations;
};

TEST(Messages, BuiltinTemplatesRenderAsTheirFamilies) {
  REQUIRE_CHAT_TEMPLATES(root);
  const Family families[] = {
      {"chatml", "Qwen-Qwen2.5-7B-Instruct", {"closed-turn", "empty-system", "system-multi-turn", "tools"}},
      {"chatml", "Qwen3-Coder", {"closed-turn", "empty-system", "single-turn", "system-multi-turn", "thinking-off",
                                 "two-users", "unicode"}},
      {"llama3", "meta-llama-Llama-3.1-8B-Instruct", {"closed-turn", "empty-system", "single-turn",
                                                      "system-multi-turn", "thinking-off", "tools", "two-users",
                                                      "unicode"}},
      {"llama3", "meta-llama-Llama-3.3-70B-Instruct", {"closed-turn", "system-multi-turn", "tools", "two-users"}},
      {"gemma", "google-gemma-2-2b-it", {"single-turn", "thinking-off", "unicode"}},
      {"phi3", "microsoft-Phi-3.5-mini-instruct", {"closed-turn", "empty-system", "single-turn", "system-multi-turn",
                                                   "thinking-off", "two-users", "unicode"}},
  };
  for (const Family& f : families) {
    const std::string source(engine::chat::builtin_template(f.builtin));
    for (const char* conv : f.conversations) {
      SCOPED_TRACE(std::string(f.builtin) + " as " + f.reference + " x " + conv);
      const Expected want = expected(root, f.reference, conv);
      ASSERT_FALSE(want.raised) << want.text;
      const Expected got = render(source, load(root / "conversations" / (std::string(conv) + ".json")));
      EXPECT_FALSE(got.raised) << got.text;
      EXPECT_EQ(got.text, want.text);
    }
  }
}

// Where Gemma 2 refuses a system prompt, the built-in opens the first turn
// with it, as Gemma 3 does.
TEST(Messages, GemmaPutsTheSystemPromptInTheFirstTurn) {
  const std::vector<Message> m = {{"system", "Be brief.", {}, {}, {}}, {"user", "Hi", {}, {}, {}}};
  RenderOptions o;
  o.bos_token = "<bos>";
  EXPECT_EQ(engine::chat::render(ct::Template(engine::chat::builtin_template("gemma")), m, o),
            "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(Messages, EveryBuiltinRendersEveryRole) {
  const std::vector<Message> m = {
      {"system", "S", {}, {}, {}},
      {"user", "U", {}, {}, {}},
      {"assistant", "", {{"c1", "f", R"({"x": 1})"}}, {}, {}},
      {"tool", "R", {}, "c1", "f"},
  };
  RenderOptions o;
  o.tools = R"([{"type": "function", "function": {"name": "f", "parameters": {}}}])";
  for (std::string_view name : engine::chat::builtin_template_names()) {
    SCOPED_TRACE(name);
    const std::string out = engine::chat::render(ct::Template(engine::chat::builtin_template(name), frozen_clock()), m, o);
    EXPECT_NE(out.find('S'), std::string::npos);
    EXPECT_NE(out.find('U'), std::string::npos);
    EXPECT_NE(out.find(R"("x": 1)"), std::string::npos) << out;  // the call's arguments
    EXPECT_NE(out.find('R'), std::string::npos);
  }
}

TEST(Messages, BadInputNamesTheMessage) {
  RenderOptions o;
  const ct::Template t(engine::chat::builtin_template("chatml"));
  auto error = [&](const std::vector<Message>& m, const RenderOptions& opt) -> std::string {
    try {
      engine::chat::render(t, m, opt);
    } catch (const engine::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error({{"user", "a", {}, {}, {}}, {"assistant", "", {{"", "f", "{oops"}}, {}, {}}}, o).rfind(
                "message 1, tool call 0: the arguments is not valid JSON", 0),
            0u);
  EXPECT_EQ(error({{"assistant", "", {{"", "f", "[1]"}}, {}, {}}}, o),
            "message 0, tool call 0: the arguments must be a JSON object");
  EXPECT_EQ(error({{"", "a", {}, {}, {}}}, o), "message 0 has no role");
  o.tools = R"({"not": "a list"})";
  EXPECT_EQ(error({{"user", "a", {}, {}, {}}}, o), "the tools must be a JSON array");
  EXPECT_THROW(engine::chat::builtin_template("vicuna"), engine::Error);
}

}  // namespace
