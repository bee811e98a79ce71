// One turn of a chat on a session: the prompt of a conversation (the model's
// template or a named built-in one, the model's BOS and EOS texts), its tokens,
// and the reply generated token by token with stop strings, end-of-generation
// tokens and UTF-8-safe pieces (text_stream.h). The C API's chat functions
// are these.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/messages.h"
#include "engine/runtime/logprobs.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"

namespace engine::chat {

// The template to render with: `source` when not empty, else the built-in
// `name` when not empty, else the file's tokenizer.chat_template, else ChatML.
std::string template_source(const gguf::File& file, std::string_view name, std::string_view source);

// The prompt of `messages`, with the model's BOS and EOS texts as bos_token
// and eos_token (options' own are replaced).
std::string render_prompt(const gguf::File& file, const Tokenizer& tokenizer, std::span<const Message> messages,
                          std::string_view template_name, std::string_view template_text, RenderOptions options);

// The prompt's tokens: special-token texts as the tokens, and BOS first when
// the model adds one and the template did not write it.
std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, std::string_view prompt);

enum class StopReason { end_of_generation, stop_string, max_tokens, callback, context_full };

struct GenerateOptions {
  uint32_t max_tokens = 0;  // 0: until the context is full
  std::vector<std::string> stops;
  // Each piece of text as it is certain; returning false stops the reply.
  std::function<bool(std::string_view)> on_text;
  // Each token of the reply as it is added to the session (before its text
  // reaches on_text), with its log-probability and the n_top_logprobs most
  // likely tokens at that step (logprobs.h). Costs a pass over the logits.
  std::function<void(const TokenLogprob& token, std::span<const TokenLogprob> top)> on_token;
  uint32_t n_top_logprobs = 0;
};

struct GenerateResult {
  uint32_t n_tokens = 0;  // tokens of the reply added to the session
  StopReason reason = StopReason::end_of_generation;
};

// Samples from the session's logits and evaluates each token until a stop.
// The end-of-generation token and the token that completed a stop string are
// not evaluated: the session ends with the reply's text before the stop.
// `result` is kept current, so it holds the tokens added when an evaluation
// throws (an abort).
void generate(Session& session, Sampler& sampler, const Tokenizer& tokenizer, const GenerateOptions& options,
              GenerateResult& result);

}  // namespace engine::chat
