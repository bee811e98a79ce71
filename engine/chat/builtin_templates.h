// Chat templates the engine carries for models whose file has no
// tokenizer.chat_template, or when the app names one: Jinja texts rendered by
// engine/chat_template like a file's, each giving what the family's own
// template gives for the same conversation (tests/chat compares them with
// ../shared/chat-templates).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engine::chat {

// "chatml", "llama3", "gemma", "phi3".
const std::vector<std::string_view>& builtin_template_names();
// The template's text; throws engine::Error naming the known ones for another name.
std::string_view builtin_template(std::string_view name);

}  // namespace engine::chat
