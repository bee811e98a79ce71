// Errors of the chat-template renderer. Every error carries the template
// position (1-based line and column) of the construct that failed, so a
// message points into the template file.
#pragma once

#include <stdexcept>
#include <string>

namespace engine::chat_template {

class Error : public std::runtime_error {
 public:
  enum class Kind {
    syntax,   // the template text does not parse
    runtime,  // evaluation failed (undefined attribute, type error, unsafe call)
    raised,   // the template called raise_exception(message)
    limit,    // a sandbox bound was exceeded (steps, output, depth, iterations)
  };

  Error(Kind kind, std::string message, int line, int column)
      : std::runtime_error(format(kind, message, line, column)),
        kind_(kind), message_(std::move(message)), line_(line), column_(column) {}

  Kind kind() const { return kind_; }
  // The bare message: for `raised`, exactly the template's own text.
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  static std::string format(Kind kind, const std::string& message, int line, int column) {
    const char* what = kind == Kind::syntax ? "syntax error" : kind == Kind::raised ? "raised"
                       : kind == Kind::limit ? "sandbox limit" : "error";
    return std::string("chat template ") + what + " at line " + std::to_string(line) + ", column " +
           std::to_string(column) + ": " + message;
  }

  Kind kind_;
  std::string message_;
  int line_, column_;
};

// A template position; carried by tokens and AST nodes.
struct Pos {
  int line = 1, column = 1;
};

[[noreturn]] inline void fail(Error::Kind kind, const Pos& pos, std::string message) {
  throw Error(kind, std::move(message), pos.line, pos.column);
}

}  // namespace engine::chat_template
