// The chat tool with piped input (one user turn per line), on the default
// model, greedy: the conversation on stdout, one figures line per turn on
// stderr, the commands, saved chats, and a context too small for the
// conversation. The figures' token counts show what each turn evaluated.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;

struct Figures {
  int prefilled, prompt, reused, decoded;
};

// Every figures line of a run, in order.
std::vector<Figures> figures(const std::string& err) {
  static const std::regex line(
      R"(chat: prefill ([0-9]+) tokens? \(([0-9]+) in the prompt, ([0-9]+) reused\), [^|]+\| TTFT [^|]+\| )"
      R"(decode ([0-9]+) tokens?,)");
  std::vector<Figures> out;
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4])});
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class ChatTool : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = engine_test::temp_dir("chat-tool"); }
  void TearDown() override { fs::remove_all(dir_); }
  // Greedy, short replies, one thread: the same text every run.
  static tool_test::Outcome chat(const std::string& input, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"-m", engine_test::default_model().string(), "--temp", "0", "-t", "1"};
    if (std::find(extra.begin(), extra.end(), "-n") == extra.end()) extra.insert(extra.end(), {"-n", "12"});
    args.insert(args.end(), extra.begin(), extra.end());
    return tool_test::run(tool_test::tool("chat"), args, input);
  }
  fs::path dir_;
};

TEST_F(ChatTool, APipedConversationPrefillsOnlyTheNewTurn) {
  const tool_test::Outcome o = chat("Hello there\nTell me a story\n", {"-sys", "Be brief."});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(lines(o.out).size(), 2u) << "a reply per line (12 tokens of a story, no newline in them):\n" << o.out;
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 2u) << o.err;
  EXPECT_EQ(f[0].reused, 0);
  EXPECT_EQ(f[0].prefilled, f[0].prompt);
  EXPECT_EQ(f[0].decoded, 12);
  // Turn 2 reuses turn 1's prompt and reply (SentencePiece gives the reply's
  // text back as the tokens sampled) and evaluates only what is new.
  EXPECT_EQ(f[1].reused, f[0].prompt + f[0].decoded) << o.err;
  EXPECT_EQ(f[1].prefilled, f[1].prompt - f[1].reused) << o.err;
  EXPECT_LT(f[1].prefilled, f[1].prompt - f[0].prompt) << o.err;
}

TEST_F(ChatTool, AnEmptyReplyIsAnEmptyLine) {
  // The reply begins with the stop string '"': nothing of it is shown.
  const tool_test::Outcome o = chat("Hi\nHi again\n", {"-r", "\""});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "\n\n") << "one line per reply, for a script reading them";
  EXPECT_TRUE(has(o.err, "| TTFT - | decode 0 tokens, - | stop string")) << o.err;
}

TEST_F(ChatTool, RegenDropsTheReplyAndReusesThePrompt) {
  const tool_test::Outcome o = chat("Hello there\n/regen\n");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> out = lines(o.out);
  ASSERT_EQ(out.size(), 2u) << o.out;
  EXPECT_EQ(out[1], out[0]) << "greedy: the same reply again";
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 2u) << o.err;
  EXPECT_EQ(f[1].prompt, f[0].prompt);
  // Only the prompt's last token evaluated again, for its logits.
  EXPECT_EQ(f[1].prefilled, 1) << o.err;
  EXPECT_EQ(f[1].reused, f[0].prompt - 1) << o.err;
}

TEST_F(ChatTool, RegenBeforeAnyReplyIsRefused) {
  const tool_test::Outcome o = chat("/regen\n");
  EXPECT_EQ(o.exit_code, 1) << "piped: a failed command is the exit code";
  EXPECT_TRUE(has(o.err, "chat: no reply to regenerate yet")) << o.err;
}

TEST_F(ChatTool, ResetKeepsTheSystemPromptAndForgetsTheTurns) {
  const tool_test::Outcome o = chat("Hello there\n/reset\nHello there\n", {"-sys", "Be brief."});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(has(o.err, "chat: back to the system prompt alone")) << o.err;
  const std::vector<std::string> out = lines(o.out);
  ASSERT_EQ(out.size(), 2u) << o.out;
  EXPECT_EQ(out[1], out[0]) << "after /reset the same message gets the same reply";
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 2u) << o.err;
  EXPECT_EQ(f[1].prompt, f[0].prompt) << "the first turn is forgotten";
  EXPECT_GT(f[1].reused, 0) << "the system prompt's cache is kept";
  EXPECT_LT(f[1].reused, f[0].prompt - 1) << "the message after it is evaluated again";
}

TEST_F(ChatTool, SaveAndLoadRoundTrip) {
  const std::string file = (dir_ / "story.session").string();
  const tool_test::Outcome saved = chat("Hello there\n/save " + file + "\n", {"-sys", "Be brief."});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_TRUE(has(saved.err, "chat: saved 3 messages: the session to " + file + ", the messages to " + file + ".json"))
      << saved.err;
  std::ifstream json(file + ".json");
  std::stringstream text;
  text << json.rdbuf();
  EXPECT_TRUE(has(text.str(), R"({"role":"user","content":"Hello there"})")) << text.str();

  // Loaded by a run with another system prompt: the saved one is the conversation's.
  const tool_test::Outcome loaded = chat("/load " + file + "\nTell me a story\n", {"-sys", "Something else."});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_TRUE(has(loaded.err, "chat: loaded 3 messages from " + file + ".json and the session from " + file))
      << loaded.err;
  // The same second turn as one run of both turns, evaluating only the new turn.
  const tool_test::Outcome whole = chat("Hello there\nTell me a story\n", {"-sys", "Be brief."});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(lines(whole.out).size(), 2u) << whole.out;
  EXPECT_EQ(loaded.out, lines(whole.out)[1] + "\n");
  const std::vector<Figures> l = figures(loaded.err), w = figures(whole.err);
  ASSERT_EQ(l.size(), 1u) << loaded.err;
  ASSERT_EQ(w.size(), 2u) << whole.err;
  EXPECT_EQ(l[0].prompt, w[1].prompt);
  EXPECT_EQ(l[0].reused, w[1].reused) << "the loaded session holds turn 1's prompt and reply";
  EXPECT_EQ(l[0].prefilled, w[1].prefilled);
}

TEST_F(ChatTool, LoadRefusesAnotherModelsSessionAndKeepsTheConversation) {
  const std::string file = (dir_ / "story.session").string();
  ASSERT_EQ(chat("Hello there\n/save " + file + "\n").exit_code, 0);
  const std::string other = (dir_ / "tiny.gguf").string();
  tool_test::synth_tiny_model(other);
  const tool_test::Outcome o = tool_test::run(
      tool_test::tool("chat"), {"-m", other, "--temp", "0", "-t", "1", "-n", "4"}, "Hi\n/load " + file + "\n/regen\n");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "saved with another model")) << o.err;
  EXPECT_FALSE(has(o.err, "chat: loaded")) << o.err;
  EXPECT_EQ(figures(o.err).size(), 2u) << "the conversation goes on (/regen of the reply to 'Hi'):\n" << o.err;
}

TEST_F(ChatTool, LoadWithoutTheMessagesFileSaysWhichIsMissing) {
  const std::string file = (dir_ / "none.session").string();
  const tool_test::Outcome o = chat("/load " + file + "\n");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_TRUE(has(o.err, "chat: " + file + ".json: cannot open")) << o.err;
}

TEST_F(ChatTool, SaveRefusesToReplaceAFileThatIsNotASavedSession) {
  const std::string file = (dir_ / "notes.txt").string();
  std::ofstream(file) << "the user's notes";
  const tool_test::Outcome o = chat("Hi\n/save " + file + "\n");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_TRUE(has(o.err, file + ": not a saved session: refusing to replace it")) << o.err;
  std::ifstream in(file);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "the user's notes");
}

TEST_F(ChatTool, QuitEndsTheChat) {
  const tool_test::Outcome o = chat("Hi\n/quit\nHello again\n");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(figures(o.err).size(), 1u) << "nothing after /quit is read:\n" << o.err;
}

TEST_F(ChatTool, BadCommandsAreSaidAndTheChatGoesOn) {
  const tool_test::Outcome o = chat("/frobnicate\n/save\n//slash first\n");
  EXPECT_EQ(o.exit_code, 1) << "piped: a failed command is the exit code";
  EXPECT_TRUE(has(o.err, "chat: unknown command '/frobnicate' (/help lists them")) << o.err;
  EXPECT_TRUE(has(o.err, "chat: /save needs a file name (/save FILE)")) << o.err;
  EXPECT_EQ(figures(o.err).size(), 1u) << "'//slash first' is a message:\n" << o.err;
}

TEST_F(ChatTool, AFullContextDropsTheOldestTurns) {
  // 128 tokens hold one turn of this conversation and a 24-token reply.
  const tool_test::Outcome o =
      chat("Hello there\nTell me a story\nWhat next\n", {"-sys", "Be brief.", "-c", "128", "-n", "24"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(has(o.err, "chat: the context (128 tokens) is full: dropped the oldest 1 turn after the system "
                         "prompt; the conversation is prefilled again"))
      << o.err;
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 3u) << o.err;
  for (const Figures& t : f) EXPECT_LE(t.prompt + t.decoded, 128);
  EXPECT_GT(f[2].reused, 0) << "the system prompt's cache is kept";
}

TEST_F(ChatTool, AReplyLongerThanTheContextIsCutAndTheNextTurnWorks) {
  // No reply limit and a model that rarely ends a story: each reply fills the context.
  const tool_test::Outcome o = chat("Hello there\nTell me a story\n", {"-c", "96", "-n", "-1"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(has(o.err, "is full with this turn alone: the reply is cut here (raise -c)")) << o.err;
  EXPECT_TRUE(has(o.err, "dropped the oldest 1 turn")) << o.err;
  EXPECT_EQ(figures(o.err).size(), 2u) << o.err;
}

TEST_F(ChatTool, AReplyThatFillsTheContextDropsTurnsAndGoesOn) {
  // The first reply ends at "bird" after a few tokens and stays; the second
  // runs to -n, past the room its prompt left: turn 1 is dropped mid-reply.
  const tool_test::Outcome o =
      chat("Hello there\nTell me a story\n", {"-sys", "Be brief.", "-c", "320", "-n", "200", "-r", "bird"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(has(o.err, "chat: the context (320 tokens) is full: dropped the oldest 1 turn after the system prompt; "
                         "the conversation and the reply so far prefilled again"))
      << o.err;
  EXPECT_TRUE(has(o.err, "the reply goes on")) << o.err;
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 2u) << o.err;
  EXPECT_GT(f[1].prompt + f[1].decoded, 320) << "the reply went on past the context's end";
  EXPECT_EQ(f[1].decoded, 200) << o.err;
}

TEST_F(ChatTool, AMessageLargerThanTheContextIsNotSent) {
  const tool_test::Outcome o = chat(std::string(300, 'a') + "\nHi\n", {"-c", "64"});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_TRUE(has(o.err, "and the context holds 64 (raise -c, or shorten the message): not sent")) << o.err;
  EXPECT_EQ(figures(o.err).size(), 1u) << "the next message is answered:\n" << o.err;
}

TEST_F(ChatTool, ASystemPromptLargerThanTheContextIsAnErrorAtStart) {
  const tool_test::Outcome o = chat("Hi\n", {"-c", "32", "-sys", std::string(200, 'a')});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_TRUE(has(o.err, "chat: the system prompt takes")) << o.err;
}

TEST_F(ChatTool, ATemplateFileIsUsedAndATurnItRefusesChangesNothing) {
  // Reads messages[0] (an error on an empty conversation: the tool must not
  // render one at start) and takes one message only.
  const std::string file = (dir_ / "one.jinja").string();
  std::ofstream(file) << "{{ messages[0]['content'] }}{% if messages|length > 1 %}"
                         "{{ raise_exception('this template takes one message') }}{% endif %}";
  const tool_test::Outcome o = chat("Once upon a time\nAnd then?\n/regen\n", {"--template", file});
  EXPECT_EQ(o.exit_code, 1) << "piped: the refused turn is the exit code";
  EXPECT_TRUE(has(o.err, "this template takes one message")) << o.err;
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 2u) << "turn 1, then /regen of it (the refused turn left nothing):\n" << o.err;
  EXPECT_EQ(f[1].prompt, f[0].prompt);
  EXPECT_EQ(f[1].prefilled, 1);
}

TEST_F(ChatTool, CtrlCDuringAPrefillDropsTheMessageAndTheNextTurnWorks) {
  // A message of 60000 tokens on the tiny byte-vocabulary model: seconds of
  // prefill, stopped by SIGINT once the tool handles it.
  const std::string model = (dir_ / "tiny.gguf").string();
  tool_test::synth_tiny_model(model);
  tool_test::Child child(tool_test::tool("chat"), {"-m", model, "--temp", "0", "-t", "1", "-n", "4", "-c", "65536"},
                         std::string(60000, 'a') + "\nHi\n");
  ASSERT_TRUE(child.wait_for_handler(SIGINT, std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  child.send(SIGINT);
  const tool_test::Outcome o = child.finish(std::chrono::seconds(60));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(has(o.err, "chat: interrupted during the prefill: the conversation is as it was")) << o.err;
  const std::vector<Figures> f = figures(o.err);
  ASSERT_EQ(f.size(), 1u) << "'Hi' is answered:\n" << o.err;
  EXPECT_LT(f[0].prompt, 100) << "the interrupted message is not in the conversation";
}

TEST_F(ChatTool, AnUnknownTemplateNamesTheBuiltIns) {
  const tool_test::Outcome o = chat("Hi\n", {"--template", "no-such-template"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(has(o.err, "--template no-such-template: neither a built-in template (chatml, ")) << o.err;
}

}  // namespace
