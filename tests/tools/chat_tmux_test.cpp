// The chat tool on a terminal: started in a detached tmux session, driven with
// send-keys and read with capture-pane, as a user types. Skipped when tmux is
// not installed (scripts/setup.sh installs it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "tests/support/sanitized.h"
#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

using namespace std::chrono_literals;

std::string shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// One tmux server of its own (-L), so a test never touches the user's, nor
// the previous test's (a new session on a socket whose server was just
// killed could find it still exiting: "server exited unexpectedly").
class Tmux {
 public:
  explicit Tmux(const std::string& command)
      : tmux_("tmux -L chat-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_id_++) + " -u -f /dev/null") {
    shell(tmux_ + " new-session -d -s chat -x 120 -y 40 '" + command + "'");
    shell(tmux_ + " set-option -t chat remain-on-exit on");  // the screen stays to be read after the exit
    socket_ = shell(tmux_ + " display-message -p '#{socket_path}'");
    while (!socket_.empty() && socket_.back() == '\n') socket_.pop_back();
  }
  ~Tmux() {
    shell(tmux_ + " kill-server");
    if (socket_.starts_with("/")) ::unlink(socket_.c_str());  // kill-server leaves it
  }
  void keys(const std::string& keys) const { shell(tmux_ + " send-keys -t chat " + keys); }
  // The screen and its scrollback, lines joined where they wrapped, without
  // the blanks -J keeps at their ends nor the blank rows below the text.
  std::string screen() const {
    const std::string raw = shell(tmux_ + " capture-pane -p -J -S -5000 -t chat");
    std::string out;
    for (char c : raw) {
      if (c == '\n') {
        while (!out.empty() && out.back() == ' ') out.pop_back();
      }
      out += c;
    }
    while (out.size() > 1 && out.back() == '\n' && out[out.size() - 2] == '\n') out.pop_back();  // blank rows
    return out;
  }
  bool dead() const { return shell(tmux_ + " display-message -p -t chat '#{pane_dead}'").starts_with("1"); }
  bool wait_for(const std::function<bool(const std::string&)>& ready, std::chrono::milliseconds timeout) const {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      if (ready(screen())) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  static inline int next_id_ = 0;
  std::string tmux_, socket_;
};

class ChatTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shell("command -v tmux").empty()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  }
  // Greedy, replies of at most 1500 tokens: long enough to interrupt (the
  // Ctrl-C lands about 100 tokens in), short enough to wait for under ASan.
  // The shell tmux runs it with prints its exit status after it (tmux's
  // #{pane_dead_status} was sometimes never set, the pane dead a second
  // later), and ignores SIGINT itself: dash, as /bin/sh, dies of the Ctrl-C
  // the terminal sends its whole process group (chat sets its own handler).
  static std::string chat_command() {
    return "trap \"\" INT; " + tool_test::tool("chat") + " -m " + engine_test::default_model().string() +
           " --temp 0 -t 1 -c 8192 -n 1500 -sys \"Tell stories.\" 2>&1; echo \"exit status $?\"";
  }
  static bool exited(const std::string& screen) { return has(screen, "exit status "); }
};

TEST_F(ChatTmux, CtrlCStopsTheReplyAndTheChatGoesOn) {
  Tmux t(chat_command());
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n>"); }, 20s)) << t.screen();
  t.keys("'Tell me a story' Enter");
  // Interrupted once the reply shows.
  const auto reply_shown = [](const std::string& screen) {
    const size_t at = screen.find("> Tell me a story\n");
    return at != std::string::npos && screen.size() > at + 80;  // the pane's blank rows are trimmed
  };
  ASSERT_TRUE(t.wait_for(reply_shown, 20s))
      << t.screen();
  t.keys("C-c");
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "| interrupted\n"); }, 20s)) << t.screen();
  std::string s = t.screen();
  EXPECT_TRUE(has(s, "chat: interrupted: the reply so far is kept")) << s;
  EXPECT_FALSE(has(s, "decode 1500 tokens")) << "the reply was stopped before its end:\n" << s;

  t.keys("'Once upon a time' Enter");
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return count(screen, "| TTFT") == 2 && has(screen, "| -n reached"); },
                         120s))
      << t.screen();
  t.keys("/quit Enter");
  ASSERT_TRUE(t.wait_for(exited, 20s)) << t.screen();
  EXPECT_TRUE(has(t.screen(), "\nexit status 0\n")) << t.screen();
  s = t.screen();
  EXPECT_TRUE(has(s, "> Once upon a time\n")) << s;
  EXPECT_TRUE(has(s, "decode 1500 tokens")) << "the second reply ran to -n:\n" << s;
  EXPECT_FALSE(has(s, "ERROR")) << s;
}

TEST_F(ChatTmux, CtrlCDropsATypedLineAndQuitsOnAnEmptyOne) {
  Tmux t(chat_command());
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n>"); }, 20s)) << t.screen();
  t.keys("'half a thoughtX' BSpace");  // Backspace erases the X on the screen too
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "> half a thought\n"); }, 20s))
      << t.screen();
  t.keys("C-c");
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "> half a thought^C\n>"); }, 20s)) << t.screen();
  EXPECT_FALSE(t.dead()) << "a typed line is dropped, the chat goes on";
  // Ctrl-C on the empty line quits.
  t.keys("C-c");
  ASSERT_TRUE(t.wait_for(exited, 20s)) << t.screen();
  EXPECT_TRUE(has(t.screen(), "\nexit status 0\n")) << t.screen();
  EXPECT_EQ(count(t.screen(), "| TTFT"), 0u) << "nothing was sent:\n" << t.screen();
}

TEST_F(ChatTmux, CtrlUClearsTheLineAndCtrlDOnAnEmptyLineQuits) {
  Tmux t(chat_command());
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n>"); }, 20s)) << t.screen();
  t.keys("'not this' C-u");
  t.keys("C-d");
  ASSERT_TRUE(t.wait_for(exited, 20s)) << t.screen();
  const std::string s = t.screen();
  EXPECT_TRUE(has(s, "\n>\nexit status 0\n")) << "the line cleared on the screen, then the end of input:\n" << s;
  EXPECT_EQ(count(s, "| TTFT"), 0u) << "nothing was sent:\n" << s;
}

TEST_F(ChatTmux, BackspaceErasesAWideCharacterAndItsCombiningMarkWhole) {
  Tmux t(chat_command());
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n>"); }, 20s)) << t.screen();
  // 語 takes two columns: Backspace goes back two, or the next key lands one
  // column too far right. "e" + U+0301 is one character of one column.
  t.keys("'日本語' BSpace 'Z' 'e\u0301' BSpace 'W'");
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "> 日本ZW\n"); }, 20s)) << t.screen();
  t.keys("C-u C-d");
  ASSERT_TRUE(t.wait_for(exited, 20s)) << t.screen();
  EXPECT_TRUE(has(t.screen(), "\n>\nexit status 0\n")) << t.screen();
}

TEST_F(ChatTmux, KeysTypedDuringAReplyShowOnceOnTheNextLineNotInTheReply) {
  // A reply until the end of the text or of the context: natively 8192
  // tokens, about a second on an idle machine (-n 1500 took a quarter of one
  // and could end before the keys were typed, when the test judged nothing)
  // and 71 s on a loaded one. The sanitizer builds stop at 2048 tokens: 18 s
  // under ASan on the loaded machine, where 8192 passed the 120 s wait.
  std::string command = chat_command();
  command.replace(command.find(" -n 1500 "), 9, " -n -1 ");
  if (engine_test::kSanitized) command.replace(command.find(" -c 8192 "), 9, " -c 2048 ");
  Tmux t(command);
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n>"); }, 20s)) << t.screen();
  t.keys("'Tell me a story' Enter");
  const auto reply_shown = [](const std::string& screen) {
    const size_t at = screen.find("> Tell me a story\n");
    return at != std::string::npos && screen.size() > at + 80;
  };
  ASSERT_TRUE(t.wait_for(reply_shown, 20s)) << t.screen();
  t.keys("'typed ahead'");
  ASSERT_FALSE(has(t.screen(), "| TTFT")) << "the reply ended before the keys were typed:\n" << t.screen();
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "| TTFT"); }, 300s)) << t.screen();
  ASSERT_TRUE(t.wait_for([](const std::string& screen) { return has(screen, "\n> typed ahead"); }, 20s)) << t.screen();
  const std::string s = t.screen();
  EXPECT_EQ(count(s, "typed ahead"), 1u) << "the terminal echoed the keys into the reply too:\n" << s;
  t.keys("C-u");
  t.keys("C-d");
  ASSERT_TRUE(t.wait_for(exited, 20s)) << t.screen();
}

}  // namespace
