// --template NAME|FILE of the tools that chat (chat, serve): a built-in
// template's name, else a Jinja file's text; ArgError naming both readings
// when it is neither.
#pragma once

#include <string>

#include "engine/api/engine.hpp"

namespace tools {

// The chat options with that template ("" : the model's own).
engine::api::ChatOptions chat_template_option(const std::string& arg);

}  // namespace tools
