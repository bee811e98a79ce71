// /save and /load: the session through the engine's saved sessions
// (engine_session_save/load: tokens, KV cache, the model's identity) and the
// messages beside it in FILE.json. The messages are the conversation; the
// session file is its prefill, saved so a loaded chat's next turn evaluates
// only the new message. FILE.json is a conversation file as
// `chat-template --conversation` reads ({"messages": [...],
// "add_generation_prompt": true}), so the prompt can be rendered from it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/chat_template/json.h"
#include "engine/runtime/session_file.h"
#include "gguf/writer_output.h"
#include "tools/chat/conversation.h"
#include "tools/common/json_writer.h"

namespace chat_tool {

namespace {

namespace ct = engine::chat_template;

std::string messages_path(const std::string& path) { return path + ".json"; }

std::vector<api::Message> read_messages(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Refused(path + ": cannot open (the messages /save writes beside the session file)");
  std::stringstream text;
  text << in.rdbuf();
  ct::Value doc;
  try {
    doc = ct::parse_json(text.str());
  } catch (const ct::ValueError& e) {
    throw Refused(path + ": " + e.what());
  }
  const ct::Value* list = doc.is_dict() ? doc.dict().find("messages") : nullptr;
  if (list == nullptr || !list->is_list()) throw Refused(path + ": no \"messages\" list");
  std::vector<api::Message> messages;
  for (const ct::Value& m : list->list()) {
    const ct::Value* role = m.is_dict() ? m.dict().find("role") : nullptr;
    const ct::Value* content = m.is_dict() ? m.dict().find("content") : nullptr;
    if (role == nullptr || content == nullptr || !role->is_string() || !content->is_string()) {
      throw Refused(path + ": message " + std::to_string(messages.size()) +
                    " is not {\"role\": \"...\", \"content\": \"...\"}");
    }
    messages.push_back({role->as_string(), content->as_string(), {}, {}, {}});
  }
  return messages;
}

}  // namespace

void Conversation::save(const std::string& path) const {
  // The session file replaces what is at `path`: never a file of the user's
  // given by mistake (as run --prompt-cache).
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0 &&
      !engine::starts_as_saved_session(path)) {
    throw Refused(path + ": not a saved session: refusing to replace it (give another file name)");
  }
  tools::JsonWriter j;
  j.begin_object().key("messages").begin_array();
  for (const api::Message& m : messages_) j.begin_object().key("role").value(m.role).key("content").value(m.content).end_object();
  j.end_array().key("add_generation_prompt").value(true).end_object();
  // Both files or neither: the messages are committed once the session is written.
  gguf::OutputFile messages(messages_path(path), 0600);
  const std::string text = j.str() + "\n";
  messages.write(text.data(), text.size());
  session_.save(path);
  messages.commit();
}

void Conversation::load(const std::string& path) {
  std::vector<api::Message> messages = read_messages(messages_path(path));
  session_.load(path);  // refuses another model's file, and then changes nothing
  messages_ = std::move(messages);
}

}  // namespace chat_tool
