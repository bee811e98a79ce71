// The chat tool's input: one line at a time from stdin, a terminal or a pipe.
//
// On a terminal the line is edited here, not by the terminal's line
// discipline, because Ctrl-C must tell an empty line (quit) from a line being
// typed (drop it), and the kernel's own line editing throws the typed text
// away on Ctrl-C before a program could look. The terminal runs without
// ICANON and ECHO while a line is read (ISIG stays: Ctrl-C is still SIGINT),
// and is restored before the line is returned. Editing: printable text,
// Backspace (one character), Ctrl-U (the whole line), Ctrl-D on an empty line
// (end of input), Enter; escape sequences (arrow keys) are ignored.
//
// From a pipe or a file every line is read as it is (a final line without a
// newline too), nothing is echoed.
#pragma once

#include <termios.h>

#include <csignal>
#include <string>

namespace chat_tool {

// SIGINT's flag: set by the handler install_interrupt_handler() installs;
// the reply and the prompt read it and clear it.
extern volatile std::sig_atomic_t g_interrupted;
// Ctrl-C sets g_interrupted (for the whole run: it stops a reply or the line
// being typed, never the program). SA_RESTART keeps output writes whole; the
// line reader waits in poll(), which SIGINT interrupts anyway.
void install_interrupt_handler();

// The terminal `fd` without ICANON and ECHO (ISIG stays: Ctrl-C is still
// SIGINT) for the object's life, restored on every way out (a throw too);
// nothing when fd < 0 or is not a terminal. While a line is read, and while a
// reply streams: keys typed ahead are then echoed once, by the next read,
// not into the reply, and Ctrl-C puts no "^C" of the terminal's there.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

class LineReader {
 public:
  enum class Result { line, end_of_input, interrupted };

  // `echo_fd`: where the prompt and the typed text go on a terminal.
  explicit LineReader(int fd = 0, int echo_fd = 1);
  bool is_terminal() const { return terminal_; }
  int fd() const { return fd_; }
  // Writes to the terminal the typed text goes to (nothing from a pipe).
  void echo(const std::string& text) const;

  // The next line (without its newline). `interrupted`: Ctrl-C came with
  // `had_text` telling whether anything was typed (the text is dropped).
  Result read(const std::string& prompt, std::string& line, bool& had_text);

 private:
  // The next byte of input; false at the end of input or on Ctrl-C (g_interrupted).
  bool next_byte(char& c);
  int fd_, echo_fd_;
  bool terminal_;
  std::string pending_;  // bytes read past the last line returned
  size_t pos_ = 0;
  bool eof_ = false;
};

}  // namespace chat_tool
