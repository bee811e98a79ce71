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

class LineReader {
 public:
  enum class Result { line, end_of_input, interrupted };

  // `echo_fd`: where the prompt and the typed text go on a terminal.
  explicit LineReader(int fd = 0, int echo_fd = 1);
  bool is_terminal() const { return terminal_; }

  // The next line (without its newline). `interrupted`: Ctrl-C came with
  // `had_text` telling whether anything was typed (the text is dropped).
  Result read(const std::string& prompt, std::string& line, bool& had_text);

 private:
  // The next byte of input; false at the end of input or on Ctrl-C (g_interrupted).
  bool next_byte(char& c);
  void echo(const std::string& text) const;
  int fd_, echo_fd_;
  bool terminal_;
  std::string pending_;  // bytes read past the last line returned
  size_t pos_ = 0;
  bool eof_ = false;
};

}  // namespace chat_tool
