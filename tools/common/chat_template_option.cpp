#include "tools/common/chat_template_option.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/common/args.h"

namespace tools {

engine::api::ChatOptions chat_template_option(const std::string& arg) {
  engine::api::ChatOptions options;
  if (arg.empty()) return options;
  std::string names;
  for (const std::string& name : engine::api::builtin_chat_templates()) {
    if (name == arg) {
      options.template_name = name;
      return options;
    }
    names += (names.empty() ? "" : ", ") + name;
  }
  std::ifstream in(arg, std::ios::binary);
  if (!in || std::filesystem::is_directory(arg)) {
    throw ArgError("--template " + arg + ": neither a built-in template (" + names + ") nor a readable file");
  }
  std::stringstream text;
  text << in.rdbuf();
  options.template_text = text.str();
  return options;
}

}  // namespace tools
