// Chat through the C API (engine.h, "chat") and the C++ wrapper: a second turn
// evaluates only its new tokens (counted with engine_session_n_evaluated), a
// stop string ends the reply where it begins, template errors and bad
// messages come back as statuses naming the problem, and a model's own
// template (a synth model with Phi-3's vocabulary and template) is used with
// its special tokens and end-of-generation token.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "tests/api/session_models.h"
#if ENGINE_TEST_SYNTH
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"
#endif

namespace {

using engine::api::Message;
using session_test::Which;

engine::api::Sampler greedy() {
  engine_sampler_params p = engine_sampler_default_params();
  p.temperature = 0;
  return engine::api::Sampler(p);
}

// A session with batches large enough that gemma4's rings (window 8) keep a
// whole reply: a truncation back to the reply's start reuses the prompt.
engine::api::Session chat_session(Which w) { return session_test::session(w, /*n_batch=*/64, /*n_ctx=*/256); }

engine::api::GenerateOptions up_to(uint32_t max_tokens, std::vector<std::string> stop = {}) {
  engine::api::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.stop = std::move(stop);
  return o;
}

bool collect(const char* text, size_t len, void* user) {
  static_cast<std::vector<std::string>*>(user)->emplace_back(text, len);
  return true;
}

class Chat : public testing::TestWithParam<Which> {
 protected:
  engine::api::Model& model() const { return session_test::Models::get(GetParam()); }
};

TEST_P(Chat, TheSecondTurnEvaluatesOnlyItsNewTokens) {
  engine::api::Session session = chat_session(GetParam());
  engine::api::Sampler sampler = greedy();
  engine_session* s = session.get();
  std::vector<engine_chat_message> messages = {
      {"system", "You tell short stories.", nullptr, 0, nullptr, nullptr},
      {"user", "Once upon a time", nullptr, 0, nullptr, nullptr},
  };
  const engine_chat_params params = engine_chat_default_params();  // no template in the file: ChatML

  size_t n_prompt = 0, n_reused = 99;
  ASSERT_EQ(engine_chat_prefill(s, messages.data(), messages.size(), &params, &n_prompt, &n_reused), ENGINE_OK)
      << engine_last_error();
  EXPECT_EQ(n_reused, 0u);
  EXPECT_EQ(engine_session_n_evaluated(s), n_prompt);
  EXPECT_EQ(engine_session_n_past(s), n_prompt);

  std::vector<std::string> pieces;
  engine_chat_generate_params gp = engine_chat_default_generate_params();
  gp.max_tokens = 8;
  gp.on_text = collect;
  gp.user_data = &pieces;
  engine_chat_result result{};
  ASSERT_EQ(engine_chat_generate(s, sampler.get(), &gp, &result), ENGINE_OK) << engine_last_error();
  EXPECT_LE(result.n_tokens, 8u);
  EXPECT_TRUE(result.reason == ENGINE_CHAT_MAX_TOKENS || result.reason == ENGINE_CHAT_END_OF_GENERATION);
  EXPECT_EQ(engine_session_n_past(s), n_prompt + result.n_tokens);  // the reply's tokens, not the end token
  EXPECT_EQ(engine_session_n_evaluated(s), n_prompt + result.n_tokens);
  std::string reply;
  for (const std::string& p : pieces) {
    EXPECT_FALSE(p.empty());  // no empty calls
    reply += p;
  }

  messages.push_back({"assistant", reply.c_str(), nullptr, 0, nullptr, nullptr});
  messages.push_back({"user", "And then?", nullptr, 0, nullptr, nullptr});
  const uint64_t evaluated_before = engine_session_n_evaluated(s);
  size_t n_prompt2 = 0, n_reused2 = 0;
  ASSERT_EQ(engine_chat_prefill(s, messages.data(), messages.size(), &params, &n_prompt2, &n_reused2), ENGINE_OK)
      << engine_last_error();
  EXPECT_GT(n_reused2, 0u);
  EXPECT_GE(n_reused2, n_prompt) << "the first turn's prompt is reused whole";
  EXPECT_LT(n_reused2, n_prompt2);
  EXPECT_EQ(engine_session_n_evaluated(s) - evaluated_before, n_prompt2 - n_reused2);
  EXPECT_EQ(engine_session_n_past(s), n_prompt2);

  // The session holds exactly the second prompt's tokens.
  std::vector<char> prompt(1 << 16);
  size_t len = 0;
  ASSERT_EQ(engine_chat_render(model().get(), messages.data(), messages.size(), &params, prompt.data(), prompt.size(),
                               &len),
            ENGINE_OK);
  std::vector<int32_t> want = model().tokenize(std::string_view(prompt.data(), len), model().bos() >= 0, true);
  EXPECT_EQ(session.tokens(), want);
}

TEST_P(Chat, AStopStringEndsTheReplyBeforeIt) {
  engine::api::Session session = chat_session(GetParam());
  engine::api::Sampler sampler = greedy();
  const std::vector<Message> messages = {{"user", "Tell me a story.", {}, {}, {}}};
  session.prefill_chat(messages);
  const engine::api::Reply full = engine::api::generate(session, sampler, up_to(12, {}));
  if (full.text.size() < 4) GTEST_SKIP() << "the reply is too short to cut: '" << full.text << "'";
  // A stop string from the middle of the reply, on character boundaries,
  // likely split across tokens.
  size_t from = full.text.size() / 2, to = from + 2;
  while (from > 0 && (static_cast<unsigned char>(full.text[from]) & 0xC0) == 0x80) --from;
  while (to < full.text.size() && (static_cast<unsigned char>(full.text[to]) & 0xC0) == 0x80) ++to;
  const std::string stop = full.text.substr(from, to - from);

  // The same prompt again: its tokens are reused (the last one evaluated again
  // for its logits), the reply's dropped. On lfm2 the recurrent state goes
  // back to its checkpoint at the end of the prompt's first batch of 64.
  const engine::api::ChatPrompt again = session.prefill_chat(messages);
  EXPECT_EQ(again.n_reused, GetParam() == Which::lfm2 ? 64u : again.n_prompt - 1);
  EXPECT_EQ(session.n_past(), again.n_prompt);
  std::string streamed;
  const engine::api::Reply cut = engine::api::generate(session, sampler, up_to(12, {"never matched", stop}),
                                                       [&](std::string_view t) {
                                                         streamed += t;
                                                         return true;
                                                       });
  EXPECT_EQ(cut.reason, ENGINE_CHAT_STOP_STRING);
  EXPECT_EQ(cut.text, full.text.substr(0, full.text.find(stop)));
  EXPECT_EQ(streamed, cut.text);
  EXPECT_LT(cut.n_tokens, full.n_tokens);
}

TEST(ChatOnLlama, TheCallbackStopsTheReply) {
  engine::api::Session session = chat_session(Which::llama);
  engine::api::Sampler sampler = greedy();
  session.prefill_chat({{"user", "Go on.", {}, {}, {}}});
  int calls = 0;
  const engine::api::Reply r = engine::api::generate(session, sampler, up_to(16, {}), [&](std::string_view) {
    ++calls;
    return false;
  });
  if (calls == 0) GTEST_SKIP() << "the model ended at once";
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.reason, ENGINE_CHAT_CALLBACK);
  EXPECT_THROW(engine::api::generate(session, sampler, up_to(16, {}), [](std::string_view) -> bool { throw std::runtime_error("app"); }),
               std::runtime_error);
}

// on_token gets each evaluated token of the reply with the log-softmax of the
// logits it was sampled from (computed here in double from engine_logits) and
// the most likely tokens, most likely first; greedy takes the first of them.
TEST(ChatOnLlama, TokensComeWithTheirLogprobsAndTheMostLikelyOnes) {
  engine::api::Model& model = session_test::Models::get(Which::llama);
  engine::api::Session session = chat_session(Which::llama);
  session.prefill_chat({{"user", "Go on.", {}, {}, {}}});
  const std::span<const float> first = session.logits();
  double norm = 0;
  for (const float l : first) norm += std::exp(static_cast<double>(l));
  std::vector<double> expected_first(first.size());
  for (size_t i = 0; i < first.size(); ++i) expected_first[i] = first[i] - std::log(norm);

  std::vector<int32_t> tokens;
  engine::api::GenerateOptions options = up_to(8);
  options.n_top_logprobs = 3;
  options.on_token = [&](const engine_token_logprob& t, std::span<const engine_token_logprob> top) {
    if (tokens.empty()) {
      EXPECT_NEAR(t.logprob, expected_first[static_cast<size_t>(t.token)], 1e-4);
      EXPECT_NEAR(top[1].logprob, expected_first[static_cast<size_t>(top[1].token)], 1e-4);
    }
    tokens.push_back(t.token);
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].token, t.token);  // greedy
    EXPECT_EQ(top[0].logprob, t.logprob);
    EXPECT_LE(t.logprob, 0.0f);
    EXPECT_GE(top[0].logprob, top[1].logprob);
    EXPECT_GE(top[1].logprob, top[2].logprob);
  };
  engine::api::Sampler sampler = greedy();
  const engine::api::Reply r = engine::api::generate(session, sampler, options);
  if (r.n_tokens == 0) GTEST_SKIP() << "the model ended at once";
  EXPECT_EQ(tokens.size(), r.n_tokens);
  const std::string text = model.detokenize(tokens);  // alone, a first SentencePiece piece loses its space
  EXPECT_TRUE(text == r.text || " " + text == r.text) << "'" << text << "' '" << r.text << "'";

  // Sampled: the token is any of them, never more likely than the first.
  engine_sampler_params p = engine_sampler_default_params();
  p.seed = 7;
  engine::api::Sampler sampled(p);
  size_t calls = 0;
  options.on_token = [&](const engine_token_logprob& t, std::span<const engine_token_logprob> top) {
    ++calls;
    EXPECT_LE(t.logprob, top[0].logprob);
  };
  session.prefill_chat({{"user", "Go on.", {}, {}, {}}});
  EXPECT_EQ(calls, engine::api::generate(session, sampled, options).n_tokens);
  // An exception thrown by on_token stops the reply and reaches the caller.
  options.on_token = [](const engine_token_logprob&, std::span<const engine_token_logprob>) {
    throw std::runtime_error("app");
  };
  session.prefill_chat({{"user", "Go on.", {}, {}, {}}});
  EXPECT_THROW(engine::api::generate(session, sampler, options), std::runtime_error);
}

// The reply is decoded as a continuation of the session's tokens: after BOS
// alone, SentencePiece's first piece "▁Once" gives "Once", as llama2.c's
// documented text of stories260K begins; after text the space stays.
TEST(ChatOnLlama, AReplyAfterBosAloneLosesTheSpacePrefixAndOneAfterTextKeepsIt) {
  engine::api::Model& model = session_test::Models::get(Which::llama);
  engine::api::Session session = chat_session(Which::llama);
  engine::api::Sampler sampler = greedy();
  const std::vector<int32_t> bos{model.bos()};
  session.prefill(bos);
  const engine::api::Reply from_bos = engine::api::generate(session, sampler, up_to(6, {}));
  EXPECT_EQ(from_bos.text.rfind("Once upon a", 0), 0u) << "'" << from_bos.text << "'";
  session.prefill_prompt(model.tokenize("Once upon a", /*add_bos=*/true));
  const engine::api::Reply after_text = engine::api::generate(session, sampler, up_to(1, {}));
  EXPECT_EQ(after_text.text, " time");
}

TEST(ChatOnLlama, TheWrapperChatReusesEveryTurn) {
  engine::api::Session session = chat_session(Which::llama);
  engine::api::Sampler sampler = greedy();
  engine::api::Chat chat(session, sampler, {}, "Be brief.");
  chat.say("Hello", up_to(6));
  const size_t first_prompt = chat.last_prompt().n_prompt;
  const uint64_t before = session.n_evaluated();
  chat.say("More", up_to(6));
  EXPECT_GE(chat.last_prompt().n_reused, first_prompt);
  EXPECT_EQ(session.n_evaluated() - before,
            chat.last_prompt().n_prompt - chat.last_prompt().n_reused + (session.n_past() - chat.last_prompt().n_prompt));
  ASSERT_EQ(chat.messages().size(), 5u);
  EXPECT_EQ(chat.messages()[2].role, "assistant");
}

// Two sessions on one model chatting from two threads at once (the model's
// template rendered concurrently) reply as one session alone does. This and
// the other wrapper tests do not depend on the model: stories260K alone (each
// gemma4 test costs about a minute under qemu).
TEST(ChatOnLlama, SessionsOnOneModelChatFromSeveralThreads) {
  auto conversation = [&] {
    engine::api::Session session = chat_session(Which::llama);
    engine::api::Sampler sampler = greedy();
    engine::api::Chat chat(session, sampler, {}, "Be brief.");
    std::string text = chat.say("One", up_to(5)).text;
    text += "|" + chat.say("Two", up_to(5)).text;
    return text;
  };
  const std::string alone = conversation();
  std::string a, b;
  std::thread ta([&] { a = conversation(); });
  std::thread tb([&] { b = conversation(); });
  ta.join();
  tb.join();
  EXPECT_EQ(a, alone);
  EXPECT_EQ(b, alone);
}

INSTANTIATE_TEST_SUITE_P(Models, Chat, testing::ValuesIn(session_test::all_models()), session_test::name_of);

engine::api::Model& llama() { return session_test::Models::get(Which::llama); }

TEST(ChatErrors, TemplateErrorsNameTheTemplatesMessage) {
  const engine_chat_message m = {"user", "hi", nullptr, 0, nullptr, nullptr};
  engine_chat_params p = engine_chat_default_params();
  p.template_text = "{% if messages[0].role == 'user' %}{{ raise_exception('Only system turns here') }}{% endif %}";
  char buf[256];
  size_t len = 0;
  EXPECT_EQ(engine_chat_render(llama().get(), &m, 1, &p, buf, sizeof buf, &len), ENGINE_ERR_TEMPLATE);
  EXPECT_NE(std::string(engine_last_error()).find("Only system turns here"), std::string::npos) << engine_last_error();
  p.template_text = "{% for %}";
  EXPECT_EQ(engine_chat_render(llama().get(), &m, 1, &p, buf, sizeof buf, &len), ENGINE_ERR_TEMPLATE);
  EXPECT_NE(std::string(engine_last_error()).find("syntax error at line 1"), std::string::npos) << engine_last_error();

  // A failed render leaves the session as it was.
  engine::api::Session session = chat_session(Which::llama);
  session.prefill_chat({{"user", "hi", {}, {}, {}}});
  const uint32_t past = session.n_past();
  size_t n_prompt = 7, n_reused = 7;
  p.template_text = "{{ raise_exception('no') }}";
  EXPECT_EQ(engine_chat_prefill(session.get(), &m, 1, &p, &n_prompt, &n_reused), ENGINE_ERR_TEMPLATE);
  EXPECT_EQ(session.n_past(), past);
  EXPECT_EQ(n_prompt, 0u);
  try {
    llama().render_chat({{"user", "hi", {}, {}, {}}}, {"", "{{ raise_exception('from C++') }}", true, "", ""});
    ADD_FAILURE() << "no exception";
  } catch (const engine::api::Error& e) {
    EXPECT_EQ(e.status(), ENGINE_ERR_TEMPLATE);
    EXPECT_NE(std::string(e.what()).find("from C++"), std::string::npos);
  }
}

TEST(ChatErrors, BadMessagesAndOptionsAreInvalidArguments) {
  char buf[512];
  size_t len = 0;
  const engine_chat_tool_call bad_call = {"c1", "f", "{not json"};
  const engine_chat_message with_call = {"assistant", "", &bad_call, 1, nullptr, nullptr};
  EXPECT_EQ(engine_chat_render(llama().get(), &with_call, 1, nullptr, buf, sizeof buf, &len),
            ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("message 0, tool call 0"), std::string::npos) << engine_last_error();
  const engine_chat_message no_role = {nullptr, "x", nullptr, 0, nullptr, nullptr};
  EXPECT_EQ(engine_chat_render(llama().get(), &no_role, 1, nullptr, buf, sizeof buf, &len), ENGINE_ERR_INVALID_ARGUMENT);
  const engine_chat_message m = {"user", "hi", nullptr, 0, nullptr, nullptr};
  engine_chat_params p = engine_chat_default_params();
  p.template_name = "vicuna";
  EXPECT_EQ(engine_chat_render(llama().get(), &m, 1, &p, buf, sizeof buf, &len), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("known: chatml, llama3, gemma, phi3"), std::string::npos);
  p = engine_chat_default_params();
  p.tools = "{}";
  EXPECT_EQ(engine_chat_render(llama().get(), &m, 1, &p, buf, sizeof buf, &len), ENGINE_ERR_INVALID_ARGUMENT);
  // Too small a buffer: the size needed, and nothing written past it.
  EXPECT_EQ(engine_chat_render(llama().get(), &m, 1, nullptr, buf, 4, &len), ENGINE_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, std::string("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n").size());
  ASSERT_EQ(engine_chat_render(llama().get(), &m, 1, nullptr, buf, len + 1, &len), ENGINE_OK);
  EXPECT_STREQ(buf, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");

  engine::api::Session session = chat_session(Which::llama);
  engine::api::Sampler sampler = greedy();
  engine_chat_result r{};
  EXPECT_EQ(engine_chat_generate(session.get(), sampler.get(), nullptr, &r), ENGINE_ERR_STATE);  // nothing prefilled
  session.prefill_chat({{"user", "hi", {}, {}, {}}});
  const char* stops[] = {"\xC3"};
  engine_chat_generate_params gp = engine_chat_default_generate_params();
  gp.stop = stops;
  gp.n_stop = 1;
  EXPECT_EQ(engine_chat_generate(session.get(), sampler.get(), &gp, &r), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("stop string 0 is not valid UTF-8"), std::string::npos);
  EXPECT_EQ(engine_chat_generate(nullptr, sampler.get(), nullptr, &r), ENGINE_ERR_INVALID_HANDLE);
}

TEST(ChatErrors, BuiltinTemplatesAreListed) {
  EXPECT_EQ(engine::api::builtin_chat_templates(), (std::vector<std::string>{"chatml", "llama3", "gemma", "phi3"}));
  // A named built-in instead of the model's (none here).
  EXPECT_EQ(llama().render_chat({{"user", "hi", {}, {}, {}}}, {"phi3", "", true, "", ""}),
            "<|user|>\nhi<|end|>\n<|assistant|>\n");
}

#if ENGINE_TEST_SYNTH
// A model whose file has a chat template and chat special tokens: Phi-3's
// vocabulary (in ../shared) on a small synth llama.
TEST(ChatModelTemplate, TheFilesTemplateAndSpecialTokensAreUsed) {
  ENGINE_REQUIRE_SHARED(vocab, "models/vocab/ggml-vocab-phi-3.gguf");
  quantize_test::TempDir dir("chat-phi3");
  const std::string out = dir / "phi3-vocab.gguf";
  const std::string vocab_path = vocab.string();
  const char* args[] = {"synth", "--arch", "llama", "--n-embd", "64", "--n-layer", "2", "--n-head", "4",
                        "--n-head-kv", "4", "--n-ff", "128", "--ctx", "256", "--tied", "--vocab", vocab_path.c_str(),
                        "--type", "F32", "-o", out.c_str(), "--no-progress"};
  tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(std::size(args)), const_cast<char**>(args));
  cmd.options.out = nullptr;
  tools::synth_model(cmd.options);
  engine::api::Model model(out);

  const std::vector<Message> messages = {{"user", "Hi", {}, {}, {}}};
  const std::string prompt = model.render_chat(messages);
  EXPECT_EQ(prompt, "<s><|user|>\nHi<|end|>\n<|assistant|>\n");  // Phi-3's own template with the file's BOS
  const std::vector<int32_t> end = model.tokenize("<|end|>", false, true);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(model.is_end_of_generation(end[0]));

  engine_session_params p = engine_session_default_params();
  p.n_ctx = 128;
  p.n_threads = 1;
  engine::api::Session session(model, p);
  const engine::api::ChatPrompt prefill = session.prefill_chat(messages);
  // BOS, then the special tokens as single tokens: far fewer than the bytes.
  const std::vector<int32_t> held = session.tokens();
  ASSERT_EQ(held.size(), prefill.n_prompt);
  EXPECT_EQ(held[0], model.bos());
  EXPECT_LT(held.size(), 12u);
  engine::api::Sampler sampler = greedy();
  const engine::api::Reply reply = engine::api::generate(session, sampler, up_to(4, {}));
  EXPECT_LE(reply.n_tokens, 4u);
}
#endif

}  // namespace
