#include "tools/chat/conversation.h"

#include <algorithm>

#include "tools/chat/line_reader.h"
#include "tools/common/plural.h"

namespace chat_tool {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool aborted(const api::Error& e) { return e.status() == ENGINE_ERR_ABORTED; }

// The first message of the turns after the system prompt.
size_t first_turn(const std::vector<api::Message>& m) { return !m.empty() && m[0].role == "system" ? 1 : 0; }

size_t last_user(const std::vector<api::Message>& m) {
  for (size_t i = m.size(); i-- > 0;) {
    if (m[i].role == "user") return i;
  }
  return m.size();
}

}  // namespace

Conversation::Conversation(api::Model& model, api::Session& session, api::Sampler& sampler, Settings settings)
    : model_(model), session_(session), sampler_(sampler), settings_(std::move(settings)),
      n_ctx_(session.kv_info().n_ctx) {
  if (!settings_.system_prompt.empty()) messages_.push_back({"system", settings_.system_prompt, {}, {}, {}});
  session_.set_abort([](void*) { return g_interrupted != 0; }, nullptr);
  // Checked now, so a system prompt larger than the context is an error at
  // start, not a refusal of every message. (Not without one: a template may
  // raise on an empty conversation.)
  const size_t n = messages_.empty() ? 0 : prompt_tokens(messages_, {}).size();
  if (n + 1 >= n_ctx_) {
    throw Refused("the system prompt takes " + tools::plural(static_cast<int64_t>(n), "token") +
                  ", and the context holds " + std::to_string(n_ctx_) + " (raise -c, or shorten it)");
  }
}

uint32_t Conversation::reserve_tokens() const {
  if (settings_.max_tokens > 0) return static_cast<uint32_t>(std::min<int64_t>(settings_.max_tokens, n_ctx_ / 2));
  return n_ctx_ / 4;
}

// As engine_chat_prefill makes them: the rendered text's tokens, special
// tokens' texts as those tokens, and BOS first when the session's prompt
// starts with one the text did not write (the model adds it). Before the
// first turn the model's BOS is counted: at most one token too many.
std::vector<int32_t> Conversation::prompt_tokens(const std::vector<api::Message>& messages,
                                                 std::string_view tail) const {
  std::string text = model_.render_chat(messages, settings_.options);
  text += tail;
  std::vector<int32_t> tokens = model_.tokenize(text, /*add_bos=*/false, /*parse_special=*/true);
  const int32_t bos = model_.bos();
  if (bos >= 0 && (tokens.empty() || tokens[0] != bos)) {
    const std::vector<int32_t> held = session_.tokens();
    if (held.empty() || held[0] == bos) tokens.insert(tokens.begin(), bos);
  }
  return tokens;
}

size_t Conversation::make_room(std::vector<api::Message>& messages, std::string_view tail, size_t room) const {
  size_t dropped = 0;
  while (prompt_tokens(messages, tail).size() + room > n_ctx_) {
    const size_t first = first_turn(messages);
    const size_t keep = last_user(messages);
    if (first >= keep) break;  // only the turn being answered is left
    size_t next = first + 1;
    while (next < keep && messages[next].role != "user") ++next;
    messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first),
                   messages.begin() + static_cast<std::ptrdiff_t>(next));
    ++dropped;
  }
  return dropped;
}

TurnFigures Conversation::say(std::string user_text, const Output& out) {
  std::vector<api::Message> candidate = messages_;
  candidate.push_back({"user", std::move(user_text), {}, {}, {}});
  const size_t dropped = make_room(candidate, {}, reserve_tokens());
  const size_t n = prompt_tokens(candidate, {}).size();
  if (n + 1 >= n_ctx_) {
    throw Refused("this message makes a prompt of " + tools::plural(static_cast<int64_t>(n), "token") +
                  " with the system prompt, and the context holds " + std::to_string(n_ctx_) +
                  " (raise -c, or shorten the message): not sent");
  }
  if (dropped > 0) {
    out.notice("the context (" + tools::plural(n_ctx_, "token") + ") is full: dropped the oldest " +
               tools::plural(static_cast<int64_t>(dropped), "turn") +
               " after the system prompt; the conversation is prefilled again (" +
               tools::plural(static_cast<int64_t>(n), "token") + ")");
  }
  std::vector<api::Message> before = std::move(messages_);
  messages_ = std::move(candidate);
  TurnFigures f;
  try {
    f = respond(out);
  } catch (...) {
    messages_ = std::move(before);  // a failed turn leaves the conversation as it was
    throw;
  }
  if (!f.answered) messages_ = std::move(before);  // interrupted before any reply: as if never sent
  return f;
}

TurnFigures Conversation::regenerate(const Output& out) {
  if (messages_.empty() || messages_.back().role != "assistant") throw Refused("no reply to regenerate yet");
  const api::Message reply = messages_.back();
  messages_.pop_back();
  TurnFigures f;
  try {
    f = respond(out);
  } catch (...) {
    messages_.push_back(reply);
    throw;
  }
  if (!f.answered) messages_.push_back(reply);
  return f;
}

TurnFigures Conversation::respond(const Output& out) {
  TurnFigures f;
  const auto start = Clock::now();
  const uint64_t evaluated = session_.n_evaluated();
  try {
    const api::ChatPrompt p = session_.prefill_chat(messages_, settings_.options);
    f.n_prompt = p.n_prompt;
    f.n_reused = p.n_reused;
  } catch (const api::Error& e) {
    if (!aborted(e)) throw;
    f.interrupted = true;  // the caller puts the conversation back as it was
    return f;
  }
  f.n_prefilled = session_.n_evaluated() - evaluated;
  f.prefill_ms = ms_since(start);
  f.answered = true;

  const uint32_t limit = settings_.max_tokens > 0 ? static_cast<uint32_t>(settings_.max_tokens) : 0;
  std::string reply;
  for (;;) {
    const uint32_t left = limit > 0 ? limit - std::min(limit, f.n_decoded) : 0;
    if (!generate_once(left, out, reply, f, start)) break;
    // (A reply at -n as the context fills ends as max_tokens, which the
    // engine checks first: `left` is never 0 below when -n is set.)
    if (f.reason != ENGINE_CHAT_CONTEXT_FULL) break;
    // The reply filled the context: drop turns and go on after the
    // conversation and the reply so far, prefilled again.
    const size_t dropped = make_room(messages_, reply, reserve_tokens() / 2 + 1);
    const std::vector<int32_t> tokens = prompt_tokens(messages_, reply);
    if (dropped == 0 || tokens.size() + 1 >= n_ctx_) {
      out.notice("the context (" + tools::plural(n_ctx_, "token") +
                 ") is full with this turn alone: the reply is cut here (raise -c)");
      break;
    }
    const auto t = Clock::now();
    const uint64_t before = session_.n_evaluated();
    try {
      session_.prefill_prompt(tokens);
    } catch (const api::Error& e) {
      if (!aborted(e)) throw;
      f.interrupted = true;
      break;
    }
    out.notice("the context (" + tools::plural(n_ctx_, "token") + ") is full: dropped the oldest " +
               tools::plural(static_cast<int64_t>(dropped), "turn") +
               " after the system prompt; the conversation and the reply so far prefilled again (" +
               tools::plural(static_cast<int64_t>(session_.n_evaluated() - before), "token") + " in " +
               std::to_string(static_cast<int64_t>(ms_since(t))) + " ms); the reply goes on");
  }
  messages_.push_back({"assistant", reply, {}, {}, {}});
  return f;
}

bool Conversation::generate_once(uint32_t max_tokens, const Output& out, std::string& text, TurnFigures& f,
                                 Clock::time_point start) {
  struct Stream {
    const Output* out;
    std::string* text;
    TurnFigures* f;
    Clock::time_point start;
  } stream{&out, &text, &f, start};
  std::vector<const char*> stops;
  for (const std::string& s : settings_.stops) stops.push_back(s.c_str());
  engine_chat_generate_params p = engine_chat_default_generate_params();
  p.max_tokens = max_tokens;
  p.stop = stops.data();
  p.n_stop = stops.size();
  p.user_data = &stream;
  // The pieces are shown as they come; Ctrl-C ends the reply at the next piece
  // (and the abort callback within the next layer).
  p.on_text = [](const char* piece, size_t len, void* user) {
    auto* s = static_cast<Stream*>(user);
    if (s->f->first_text_ms < 0) s->f->first_text_ms = ms_since(s->start);
    s->text->append(piece, len);
    s->out->text(std::string_view(piece, len));
    return g_interrupted == 0;
  };
  engine_chat_result r{};
  const auto t = Clock::now();
  const engine_status status = engine_chat_generate(session_.get(), sampler_.get(), &p, &r);
  f.decode_ms += ms_since(t);
  f.n_decoded += r.n_tokens;
  f.reason = r.reason;
  if (status == ENGINE_ERR_ABORTED || r.reason == ENGINE_CHAT_CALLBACK) {
    f.interrupted = true;
    return false;
  }
  api::check(status);
  return true;
}

void Conversation::reset() {
  messages_.resize(first_turn(messages_));
  // The session keeps the system prompt's tokens (the next turn reuses them),
  // so a /save after /reset holds what the messages say.
  std::vector<int32_t> system;
  if (!messages_.empty()) {
    try {
      api::ChatOptions closed = settings_.options;
      closed.add_generation_prompt = false;
      std::string text = model_.render_chat(messages_, closed);
      system = model_.tokenize(text, /*add_bos=*/false, /*parse_special=*/true);
    } catch (const api::Error&) {
      // A template that cannot render a system prompt alone: nothing kept.
    }
  }
  const std::vector<int32_t> held = session_.tokens();
  // The session may start with a BOS the text did not write.
  const size_t offset = !held.empty() && !system.empty() && held[0] == model_.bos() && system[0] != held[0] ? 1 : 0;
  size_t common = 0;
  while (common < system.size() && offset + common < held.size() && held[offset + common] == system[common]) ++common;
  session_.truncate(static_cast<uint32_t>(common == 0 ? 0 : offset + common));
}

}  // namespace chat_tool
