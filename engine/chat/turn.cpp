#include "engine/chat/turn.h"

#include "engine/chat/builtin_templates.h"
#include "engine/chat/text_stream.h"
#include "engine/grammar/token_constraint.h"
#include "engine/support/error.h"

namespace engine::chat {

std::string template_source(const gguf::File& file, std::string_view name, std::string_view source) {
  if (!source.empty()) return std::string(source);
  if (!name.empty()) return std::string(builtin_template(name));
  if (const auto text = file.find_string("tokenizer.chat_template")) return std::string(*text);
  return std::string(builtin_template("chatml"));  // what most small chat models were tuned on
}

std::string render_prompt(const gguf::File& file, const Tokenizer& tokenizer, std::span<const Message> messages,
                          std::string_view template_name, std::string_view template_text, RenderOptions options) {
  const chat_template::Template tmpl(template_source(file, template_name, template_text));
  options.bos_token = tokenizer.bos() >= 0 ? std::string(tokenizer.token_text(tokenizer.bos())) : "";
  options.eos_token = tokenizer.eos() >= 0 ? std::string(tokenizer.token_text(tokenizer.eos())) : "";
  return render(tmpl, messages, options);
}

std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, std::string_view prompt) {
  bool add_bos = tokenizer.add_bos() && tokenizer.bos() >= 0;
  if (add_bos && prompt.starts_with(tokenizer.token_text(tokenizer.bos()))) add_bos = false;
  return tokenizer.encode(prompt, add_bos, /*parse_special=*/true);
}

void generate(Session& session, Sampler& sampler, const Tokenizer& tokenizer, const GenerateOptions& options,
              GenerateResult& result) {
  result = GenerateResult{};
  if (session.logits().empty()) throw Error("no logits to sample from: prefill the prompt first");
  const size_t n_vocab = static_cast<size_t>(tokenizer.n_vocab());
  if (grammar::TokenConstraint* g = sampler.grammar()) g->reset();  // each reply is a sentence of its own
  TextStream stream(options.stops);
  // The reply is decoded as the continuation of the session's tokens, as a
  // decode of the whole sequence would give it: after BOS alone a
  // SentencePiece reply's first piece loses the space its encoder put before
  // the text ("Once upon", not " Once upon"); after text it keeps it. What the
  // context's last token left unfinished is not the reply's.
  Tokenizer::StreamDecoder decoder = tokenizer.stream_decoder();
  for (const int32_t t : session.tokens()) decoder.push(t);
  (void)decoder.flush();
  auto emit = [&](const std::string& text) { return text.empty() || !options.on_text || options.on_text(text); };
  for (;;) {
    if (options.max_tokens != 0 && result.n_tokens >= options.max_tokens) {
      result.reason = StopReason::max_tokens;
      break;
    }
    const std::span<const float> logits = session.logits();
    const int32_t token = sampler.sample(logits.subspan(logits.size() - n_vocab));
    sampler.accept(token);
    if (tokenizer.is_end_of_generation(token)) {
      result.reason = StopReason::end_of_generation;
      break;
    }
    if (session.n_past() >= session.n_ctx()) {
      result.reason = StopReason::context_full;
      break;
    }
    const std::string text = stream.push(decoder.push(token));
    if (stream.stopped()) {
      result.reason = StopReason::stop_string;
      if (!emit(text)) result.reason = StopReason::callback;
      return;
    }
    if (options.on_token) {
      const std::span<const float> row = logits.subspan(logits.size() - n_vocab);
      const float log_norm = log_sum_exp(row);
      const std::vector<TokenLogprob> top = top_logprobs(row, options.n_top_logprobs, log_norm);
      options.on_token(TokenLogprob{token, row[static_cast<size_t>(token)] - log_norm}, top);
    }
    session.eval({&token, 1});
    ++result.n_tokens;
    if (!emit(text)) {
      result.reason = StopReason::callback;
      return;
    }
  }
  std::string rest = stream.push(decoder.flush());
  rest += stream.finish();
  if (!emit(rest)) result.reason = StopReason::callback;
}

}  // namespace engine::chat
