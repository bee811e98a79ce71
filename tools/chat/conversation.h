// The chat tool's conversation: the messages and the session that holds
// their prompt, on the chat API (engine/api/engine.hpp).
//
// Each turn prefills only what the session does not hold yet (the chat API's
// prefix reuse), then streams the reply. The context is kept from filling:
// before a turn, the oldest turns after the system prompt are dropped until the
// prompt leaves room for a reply (reserve_tokens()); a reply that still fills
// the context drops more turns and goes on after the conversation and the
// reply so far are prefilled again. Ctrl-C (g_interrupted) stops a prefill or
// a reply; the part of a reply generated so far is kept as the reply.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/api/engine.hpp"

namespace chat_tool {

namespace api = engine::api;

// A request the conversation cannot do (/regen before any reply, a message
// larger than the context): said to the user, nothing changed.
class Refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a turn's output goes: the reply's pieces, and notices about it
// (turns dropped, the reply cut or interrupted).
struct Output {
  std::function<void(std::string_view)> text;
  std::function<void(const std::string&)> notice;
};

// What a turn did, for the figures line.
struct TurnFigures {
  size_t n_prompt = 0;      // the prompt's tokens
  size_t n_reused = 0;      // of them, held by the session already
  uint64_t n_prefilled = 0; // tokens the prefill evaluated (the session's count)
  double prefill_ms = 0;
  double first_text_ms = -1;  // from the prefill's start to the first text shown; -1: none
  uint32_t n_decoded = 0;     // reply tokens evaluated
  double decode_ms = 0;
  engine_chat_stop_reason reason = ENGINE_CHAT_END_OF_GENERATION;
  bool interrupted = false;   // Ctrl-C during the prefill or the reply
  bool answered = false;      // a reply was added (false: the prefill was interrupted)
};

struct Settings {
  api::ChatOptions options;
  std::string system_prompt;
  int64_t max_tokens = -1;  // per reply; -1: no limit
  std::vector<std::string> stops;
};

class Conversation {
 public:
  Conversation(api::Model& model, api::Session& session, api::Sampler& sampler, Settings settings);

  TurnFigures say(std::string user_text, const Output& out);
  // Drops the last reply and generates it again (the prompt's cache reused).
  TurnFigures regenerate(const Output& out);
  // Back to the system prompt alone (the session keeps the system prompt's cache).
  void reset();
  // The session to `path` (engine_session_save) and the messages to
  // `path`.json; /load reads both, or changes nothing.
  void save(const std::string& path) const;
  void load(const std::string& path);

  const std::vector<api::Message>& messages() const { return messages_; }
  uint32_t n_ctx() const { return n_ctx_; }
  // Room kept free for a reply when turns are dropped before it.
  uint32_t reserve_tokens() const;

 private:
  TurnFigures respond(const Output& out);
  std::vector<int32_t> prompt_tokens(const std::vector<api::Message>& messages, std::string_view tail) const;
  // Drops the oldest turns of `messages` (never the system prompt nor the last
  // user message on) until its prompt, `tail` and `room` tokens fit; returns
  // the turns dropped.
  size_t make_room(std::vector<api::Message>& messages, std::string_view tail, size_t room) const;
  // Runs engine_chat_generate once, streaming to `out`; false when Ctrl-C stopped it.
  bool generate_once(uint32_t max_tokens, const Output& out, std::string& text, TurnFigures& f,
                     std::chrono::steady_clock::time_point start);

  api::Model& model_;
  api::Session& session_;
  api::Sampler& sampler_;
  Settings settings_;
  uint32_t n_ctx_;
  std::vector<api::Message> messages_;
};

}  // namespace chat_tool
