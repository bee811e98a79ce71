// Command-line parsing shared by the tools, so they behave alike:
// "-x VALUE" / "--long VALUE" / "--long=VALUE" options with typed values and
// clear errors; the model file as "-m FILE" or a plain path in every tool; an
// unknown option answered with one line and the nearest known option; usage
// errors exit 2, other errors 1 (tool_main).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tools {

// A usage error: tool_main prints it with a pointer to --help and exits 2.
class ArgError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(int argc, char** argv) : args_(argv + 1, argv + argc) {}

  bool done() const { return i_ >= args_.size(); }
  // True (and consumes it) when the next argument is one of the names.
  bool flag(std::initializer_list<std::string_view> names);
  // True when the next argument is one of the names; its value goes to `value`.
  bool option(std::initializer_list<std::string_view> names, std::string& value);
  bool option(std::initializer_list<std::string_view> names, int64_t& value);
  bool option(std::initializer_list<std::string_view> names, float& value);
  // The model file as "-m FILE", "--model FILE" or a plain path: every tool
  // takes both. A second one is an ArgError naming both.
  bool model(std::string& path);
  // The same for a tool that takes several (bench): each is appended.
  bool model(std::vector<std::string>& paths);
  // True (and consumed into `value`) when the next argument is not an option.
  bool positional(std::string& value);
  // The next argument, unconsumed (for messages).
  const std::string& peek() const { return args_[i_]; }
  std::string take() { return args_[i_++]; }
  // Throws the ArgError for the next argument, which no option took:
  // "unknown option '--tread'; did you mean '--threads'?", the suggestion the
  // nearest of every option name asked about so far (the tool's options, since
  // a parse loop asks about all of them before giving up on an argument).
  [[noreturn]] void unknown() const;

 private:
  bool match(std::initializer_list<std::string_view> names, std::string* value);
  std::vector<std::string> args_;
  size_t i_ = 0;
  std::vector<std::string> known_;  // every option name asked about
};

// The known option nearest to `typed` ("--tread" -> "--threads"; a value
// after '=' is ignored), or "" when none is close: within an edit distance of
// a third of the name, or one a prefix of the other.
std::string nearest_option(std::string_view typed, const std::vector<std::string>& known);

// "1,403,407" -> {1, 403, 407}; throws ArgError naming the bad item.
std::vector<int32_t> parse_int_list(std::string_view text);

// The whole of a file a user named (a template, a conversation, a grammar);
// throws std::runtime_error "cannot open PATH".
std::string read_text_file(const std::string& path);

// A tool's main: runs `body` and turns what it throws into the same messages
// and exit codes in every tool. ArgError: "<name>: <message> (<name> --help
// lists the options)" on one line (the whole usage when no argument was given
// at all), exit 2; any
// other exception: "<name>: <message>", exit 1. Otherwise body's exit code.
int tool_main(const char* name, void (*usage)(FILE*), int argc, const std::function<int()>& body);

}  // namespace tools
