// chat-template as a user runs it: the prompt on stdout byte for byte (no
// newline added), a template's raised error on stderr with exit code 1, the
// template taken from a GGUF's tokenizer.chat_template with -m, a frozen clock
// with --now, the engine's built-in templates with --builtin, usage errors
// with exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gguf/writer.h"
#include "tests/support/json.h"
#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;
using tool_test::tool;

class ChatTemplateTool : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = engine_test::temp_dir("chat-template-tool");
    write(dir_ / "conv.json",
          R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi é"}],)"
          R"( "add_generation_prompt": true, "bos_token": "<s>", "extra": {"flag": 7}})");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
};

fs::path ChatTemplateTool::dir_;

const char* const kTemplate =
    "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}[{{ flag }}]";

TEST_F(ChatTemplateTool, PrintsThePromptByteForByte) {
  write(dir_ / "t.jinja", kTemplate);
  const auto o = tool_test::run(tool("chat-template"), {"--template", path("t.jinja"), "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "<s><|system|>Be brief.\n<|user|>Hi é\n<|assistant|>[7]");
  EXPECT_EQ(o.err, "");
}

TEST_F(ChatTemplateTool, RaisedErrorGoesToStderrWithExitCode1) {
  write(dir_ / "raise.jinja", "partial {% if messages[0].role == 'system' %}{{ raise_exception('No system role.') }}{% endif %}");
  const auto o =
      tool_test::run(tool("chat-template"), {"--template", path("raise.jinja"), "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "chat-template: chat template raised at line 1, column 49: No system role.\n");
}

TEST_F(ChatTemplateTool, TakesTheTemplateFromAGguf) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.chat_template", kTemplate);
  w.write(path("with-template.gguf"));
  auto o = tool_test::run(tool("chat-template"), {"-m", path("with-template.gguf"), "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "<s><|system|>Be brief.\n<|user|>Hi é\n<|assistant|>[7]");

  o = tool_test::run(tool("chat-template"), {"-m", engine_test::default_model().string(), "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("has no tokenizer.chat_template"), std::string::npos) << o.err;
}

TEST_F(ChatTemplateTool, RendersABuiltinTemplate) {
  auto o = tool_test::run(tool("chat-template"), {"--builtin", "llama3", "--conversation", path("conv.json"), "--now",
                                                  "2024-07-26"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out,
            "<s><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
            "Today Date: 26 Jul 2024\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi é<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  o = tool_test::run(tool("chat-template"), {"--builtin", "vicuna", "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("no built-in chat template named 'vicuna' (known: chatml, llama3, gemma, phi3)"),
            std::string::npos)
      << o.err;
}

TEST_F(ChatTemplateTool, NowFreezesStrftimeNow) {
  write(dir_ / "date.jinja", "{{ strftime_now('%d %b %Y, %A') }}");
  const auto o = tool_test::run(tool("chat-template"), {"--template", path("date.jinja"), "--conversation",
                                                         path("conv.json"), "--now", "2024-07-26 12:00:00"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "26 Jul 2024, Friday");
}

TEST_F(ChatTemplateTool, BadInputIsAClearError) {
  auto o = tool_test::run(tool("chat-template"), {"--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("give one of --template FILE.jinja, -m MODEL.gguf and --builtin NAME"), std::string::npos)
      << o.err;
  o = tool_test::run(tool("chat-template"), {"--builtin", "chatml", "-m", "x.gguf", "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 2);

  write(dir_ / "bad.json", R"({"messages": [}")");
  write(dir_ / "t.jinja", kTemplate);
  o = tool_test::run(tool("chat-template"), {"--template", path("t.jinja"), "--conversation", path("bad.json")});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("bad.json: JSON: unexpected character '}' at byte 14"), std::string::npos) << o.err;

  write(dir_ / "syntax.jinja", "ok\n{% for x in %}");
  o = tool_test::run(tool("chat-template"), {"--template", path("syntax.jinja"), "--conversation", path("conv.json")});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("syntax error at line 2, column 13"), std::string::npos) << o.err;
}

TEST_F(ChatTemplateTool, RendersASharedTemplateAsJinja2Does) {
  ENGINE_REQUIRE_SHARED(expected_file, "chat-templates/expected/Qwen-Qwen3-0.6B.json");
  const fs::path root = expected_file.parent_path().parent_path();
  const auto expected = engine_test::Json::parse_file(expected_file);
  const auto o = tool_test::run(tool("chat-template"), {"--template", (root / "templates" / "Qwen-Qwen3-0.6B.jinja").string(),
                                                         "--conversation", (root / "conversations" / "tools.json").string()});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, expected["cases"]["tools"]["output"].string());
}

}  // namespace
