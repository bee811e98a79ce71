#include "tools/serve/turn.h"

#include <chrono>

namespace serve {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct AbortState {
  const PeerConnection* peer;
  const std::atomic<bool>* stopping;
};

// Polled by the engine during an evaluation: a long prompt stops soon after
// its client leaves.
bool should_abort(void* user) {
  const auto* s = static_cast<const AbortState*>(user);
  return s->stopping->load() || s->peer->gone_throttled();
}

}  // namespace

TurnResult run_turn(const engine::api::Model& model, Slot& slot, engine::api::Sampler& sampler,
                    const TurnRequest& request, const PeerConnection& peer, const std::atomic<bool>& stopping,
                    const PieceSink& sink) {
  TurnResult r;
  AbortState abort{&peer, &stopping};
  engine::api::Session& session = slot.session;
  session.set_abort(should_abort, &abort);
  struct ClearAbort {
    engine::api::Session& s;
    ~ClearAbort() {
      try {
        s.set_abort(nullptr, nullptr);
      } catch (...) {  // idle now: cannot fail
      }
    }
  } clear_abort{session};

  engine::api::GenerateOptions options = request.options;
  if (request.logprobs) {
    options.n_top_logprobs = request.top_logprobs;
    options.on_token = [&](const engine_token_logprob& t, std::span<const engine_token_logprob> top) {
      TokenLogprob e{model.piece(t.token), t.logprob, {}};
      for (const engine_token_logprob& x : top) e.top.emplace_back(model.piece(x.token), x.logprob);
      r.tokens.push_back(std::move(e));
    };
  }
  const auto on_text = [&](std::string_view text) {
    if (stopping.load() || peer.gone()) return false;
    const std::span<const TokenLogprob> made(r.tokens.data() + r.n_tokens_sent, r.tokens.size() - r.n_tokens_sent);
    r.n_tokens_sent = r.tokens.size();
    return sink(text, made);
  };
  try {
    const auto t0 = Clock::now();
    r.n_reused = session.prefill_prompt(request.prompt);
    r.prompt_seconds = seconds_since(t0);
    const auto t1 = Clock::now();
    r.reply = engine::api::generate(session, sampler, options, on_text);
    r.generation_seconds = seconds_since(t1);
  } catch (const engine::api::Error& e) {
    if (e.status() != ENGINE_ERR_ABORTED) throw;
    r.abandoned = true;
  }
  if (r.reply.reason == ENGINE_CHAT_CALLBACK) r.abandoned = true;
  return r;
}

}  // namespace serve
