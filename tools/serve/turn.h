// One request's generation on a session: the prompt evaluated (reusing what
// the session holds), the reply generated with its pieces handed to a sink as
// they are certain, each token's log-probabilities when asked, and the whole
// stopped when the client leaves (its connection is watched during the prompt
// and between tokens) or the server stops.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/api/engine.hpp"
#include "tools/serve/peer_connection.h"
#include "tools/serve/response.h"
#include "tools/serve/slot_pool.h"

namespace serve {

struct TurnRequest {
  std::span<const int32_t> prompt;
  engine::api::GenerateOptions options;  // max_tokens and stop strings
  bool logprobs = false;
  uint32_t top_logprobs = 0;
};

struct TurnResult {
  engine::api::Reply reply;
  size_t n_reused = 0;
  std::vector<TokenLogprob> tokens;  // with logprobs: every token of the reply
  size_t n_tokens_sent = 0;          // of them, those given to the sink with a piece
  double prompt_seconds = 0, generation_seconds = 0;
  bool abandoned = false;  // the client left (or the server stopped) before the end
};

// Receives each piece of the reply and the tokens that made it (with
// logprobs); false stops the reply (the client is gone).
using PieceSink = std::function<bool(std::string_view text, std::span<const TokenLogprob> tokens)>;

TurnResult run_turn(const engine::api::Model& model, Slot& slot, engine::api::Sampler& sampler,
                    const TurnRequest& request, const PeerConnection& peer, const std::atomic<bool>& stopping,
                    const PieceSink& sink);

}  // namespace serve
