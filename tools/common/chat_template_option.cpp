#include "tools/common/chat_template_option.h"

#include <stdexcept>

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
  try {
    options.template_text = read_text_file(arg);  // refuses a directory too
  } catch (const std::runtime_error&) {
    throw ArgError("--template " + arg + ": neither a built-in template (" + names + ") nor a readable file");
  }
  return options;
}

}  // namespace tools
