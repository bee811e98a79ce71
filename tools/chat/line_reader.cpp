#include "tools/chat/line_reader.h"

#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace chat_tool {

volatile std::sig_atomic_t g_interrupted = 0;

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_interrupted = 1; };
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
}

RawTerminal::RawTerminal(int fd) : fd_(fd) {
  if (fd_ < 0 || ::tcgetattr(fd_, &saved_) != 0) return;
  termios raw = saved_;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  active_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
}

RawTerminal::~RawTerminal() {
  if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
}

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The last code point of non-empty UTF-8 `text`, taken off it (a malformed
// sequence counts as one code point per byte that starts one).
char32_t pop_code_point(std::string& text) {
  size_t start = text.size() - 1;
  while (start > 0 && is_continuation(text[start])) --start;
  const auto lead = static_cast<unsigned char>(text[start]);
  const size_t n = text.size() - start;
  char32_t c = n == 1 ? lead : lead & (0x7F >> n);
  for (size_t i = start + 1; i < text.size(); ++i) c = (c << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
  text.resize(start);
  return c;
}

// The columns a terminal draws a code point in: 0 for combining marks,
// joiners and variation selectors, 2 for the East Asian wide and full-width
// ranges and the emoji blocks, 1 otherwise (as wcwidth, without a locale).
int columns(char32_t c) {
  const auto in = [c](char32_t lo, char32_t hi) { return c >= lo && c <= hi; };
  if (in(0x0300, 0x036F) || in(0x1AB0, 0x1AFF) || in(0x1DC0, 0x1DFF) || in(0x200B, 0x200F) || in(0x20D0, 0x20FF) ||
      in(0xFE00, 0xFE0F) || in(0xFE20, 0xFE2F) || in(0xE0100, 0xE01EF)) {
    return 0;
  }
  if (in(0x1100, 0x115F) || in(0x2E80, 0x303E) || in(0x3041, 0x33FF) || in(0x3400, 0x4DBF) || in(0x4E00, 0x9FFF) ||
      in(0xA000, 0xA4CF) || in(0xAC00, 0xD7A3) || in(0xF900, 0xFAFF) || in(0xFE30, 0xFE4F) || in(0xFF00, 0xFF60) ||
      in(0xFFE0, 0xFFE6) || in(0x1F300, 0x1F64F) || in(0x1F900, 0x1F9FF) || in(0x20000, 0x3FFFD)) {
    return 2;
  }
  return 1;
}

// Removes the last character of `text`: a code point with the zero-width
// ones after it (a base and its combining marks go together). Returns the
// columns it took on the screen, or -1 when `text` was empty.
int pop_character(std::string& text) {
  if (text.empty()) return -1;
  int width = 0;
  do {
    width = columns(pop_code_point(text));
  } while (width == 0 && !text.empty());
  return width;
}

// Back over what a character took and clear to the end of the line (a space
// written over it would stay on the screen as a trailing blank).
std::string erase(int columns) { return std::string(static_cast<size_t>(columns), '\b') + "\x1b[K"; }

}  // namespace

LineReader::LineReader(int fd, int echo_fd) : fd_(fd), echo_fd_(echo_fd), terminal_(::isatty(fd) == 1) {}

void LineReader::echo(const std::string& text) const {
  if (!terminal_) return;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(echo_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

bool LineReader::next_byte(char& c) {
  for (;;) {
    if (pos_ < pending_.size()) {
      c = pending_[pos_++];
      return true;
    }
    if (eof_) return false;
    // SIGINT stays blocked between the flag's check and the wait, and ppoll
    // unblocks it atomically: a Ctrl-C in between is never missed.
    sigset_t block, previous;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    ::sigprocmask(SIG_BLOCK, &block, &previous);
    if (g_interrupted) {
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    sigset_t wait_mask = previous;
    sigdelset(&wait_mask, SIGINT);
    const int ready = ::ppoll(&p, 1, nullptr, &wait_mask);
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      eof_ = true;
      return false;
    }
    char buf[4096];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    pending_.assign(buf, static_cast<size_t>(n));
    pos_ = 0;
  }
}

LineReader::Result LineReader::read(const std::string& prompt, std::string& line, bool& had_text) {
  line.clear();
  had_text = false;
  const RawTerminal raw(terminal_ ? fd_ : -1);
  echo(prompt);
  char c = 0;
  for (;;) {
    if (!next_byte(c)) {
      if (g_interrupted) {
        had_text = !line.empty();
        line.clear();
        pending_.clear();  // what was typed ahead goes with the line
        pos_ = 0;
        echo("^C\n");
        return Result::interrupted;
      }
      if (!line.empty()) return Result::line;  // a last line without a newline
      return Result::end_of_input;
    }
    if (!terminal_) {
      if (c != '\n') {
        line += c;
        continue;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return Result::line;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r') {
      echo("\n");
      return Result::line;
    }
    if (u == 0x7F || u == 0x08) {
      if (const int width = pop_character(line); width >= 0) echo(erase(width));
    } else if (u == 0x15) {  // Ctrl-U
      for (int width; (width = pop_character(line)) >= 0;) echo(erase(width));
    } else if (u == 0x04) {  // Ctrl-D: the end of input on an empty line, as a shell
      if (line.empty()) {
        echo("\n");
        return Result::end_of_input;
      }
    } else if (u == 0x1B) {  // ESC [ ... final byte, or ESC O x: a key we do not edit with
      if (next_byte(c) && (c == '[' || c == 'O')) {
        const bool csi = c == '[';
        while (next_byte(c) && csi && !(c >= 0x40 && c <= 0x7E)) {
        }
      }
    } else if (u >= 0x20 || c == '\t') {
      if (c == '\t') c = ' ';  // one column, so Backspace erases what was drawn
      line += c;
      echo(std::string(1, c));
    }
  }
}

}  // namespace chat_tool
