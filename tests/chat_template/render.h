// Helpers of the chat-template tests: render a template text with variables
// given as JSON, and catch the Error a render throws.
#pragma once

#include <optional>
#include <string>

#include "engine/chat_template/chat_template.h"

namespace chat_template_test {

namespace ct = engine::chat_template;

// Renders `source` with `variables_json` (a JSON object) as its variables.
std::string render(const std::string& source, const std::string& variables_json = "{}", const ct::Options& options = {});

// The Error rendering throws, or nullopt when it renders.
std::optional<ct::Error> render_error(const std::string& source, const std::string& variables_json = "{}",
                                      const ct::Options& options = {});

}  // namespace chat_template_test
