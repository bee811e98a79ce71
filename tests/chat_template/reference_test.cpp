// Every template of ../shared/chat-templates with every conversation, against
// what jinja2 (as Hugging Face's apply_chat_template sets it up) made of them:
// the output byte for byte, or, where the template raised, exactly its message.
// Cases where jinja2 itself failed say nothing about correctness and are
// skipped. The files are read at test time; without ../shared the suite skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/chat_template/chat_template.h"
#include "engine/chat_template/json.h"
#include "tests/support/frozen_clock.h"
#include "tests/support/json.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
namespace ct = engine::chat_template;

struct Case {
  std::string expected_file;  // expected/<template>.json; empty: ../shared is missing
  std::string conversation;
};

std::vector<Case> cases() {
  const fs::path dir = engine_test::shared_dir() / "chat-templates" / "expected";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {Case{}};
  auto json_files = [](const fs::path& folder) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(folder))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
  };
  std::vector<Case> out;
  for (const auto& f : json_files(dir))
    for (const auto& conversation : json_files(dir.parent_path() / "conversations"))
      out.push_back({f.string(), conversation.stem().string()});
  return out;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Reference : public ::testing::TestWithParam<Case> {};

TEST_P(Reference, RendersAsJinja2) {
  const Case& c = GetParam();
  if (c.expected_file.empty()) {
    GTEST_SKIP() << "missing shared folder " << (engine_test::shared_dir() / "chat-templates").string()
                 << " (set ENGINE_SHARED_DIR to the ../shared folder)";
  }
  const fs::path root = fs::path(c.expected_file).parent_path().parent_path();
  const auto expected = engine_test::Json::parse_file(c.expected_file);
  const auto& want = expected["cases"][c.conversation];
  if (want.has("raised_by") && want["raised_by"].string() == "jinja2") {
    GTEST_SKIP() << "jinja2 itself failed here: " << want["error"].string();
  }
  const std::string source = read(root / "templates" / expected["template"].string());
  const ct::Value variables =
      ct::conversation_variables(ct::parse_json(read(root / "conversations" / (c.conversation + ".json"))));
  ct::Options options;
  options.now = engine_test::frozen_now;
  if (want.has("output")) {
    std::string got;
    try {
      got = ct::Template(source, options).render(variables);
    } catch (const ct::Error& e) {
      FAIL() << e.what();
    }
    EXPECT_EQ(got, want["output"].string());
  } else {
    try {
      const std::string got = ct::Template(source, options).render(variables);
      FAIL() << "rendered instead of raising \"" << want["error"].string() << "\":\n" << got;
    } catch (const ct::Error& e) {
      EXPECT_EQ(e.kind(), ct::Error::Kind::raised) << e.what();
      EXPECT_EQ(e.message(), want["error"].string());
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  if (info.param.expected_file.empty()) return "shared_folder_missing";
  std::string name = fs::path(info.param.expected_file).stem().string() + "__" + info.param.conversation;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ChatTemplates, Reference, ::testing::ValuesIn(cases()), case_name);

}  // namespace
