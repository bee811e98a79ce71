// chat: an interactive multi-turn chat with a GGUF model on the terminal, on
// the chat API (docs/chat-tool.md). The reply streams to stdout; after each
// turn one line of figures (prefill, time to the first text (TTFT), decode) goes to
// stderr, dimmed on a terminal, so stdout is the conversation alone.
//
//   chat -m model.gguf -sys "You are concise."
//   printf 'Hello\nAnd then?\n' | chat -m model.gguf --temp 0 -n 64
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine/api/engine.hpp"
#include "tools/chat/conversation.h"
#include "tools/chat/line_reader.h"
#include "tools/common/args.h"
#include "tools/common/chat_template_option.h"
#include "tools/common/log_level.h"
#include "tools/common/plural.h"
#include "tools/common/sampler_args.h"

namespace {

using namespace chat_tool;  // NOLINT: the tool's own parts

struct Options {
  std::string model, system_prompt, template_arg, cpus;
  int64_t n_predict = -1, n_ctx = 0, n_threads = 0;
  std::vector<std::string> stops;
  engine::SamplerParams sampler;
  tools::GrammarArgs grammar;
  bool verbose = false;
};

const char* const kCommands =
    "  /reset        back to the system prompt alone\n"
    "  /regen        drop the last reply and generate it again\n"
    "  /save FILE    save the chat: the session to FILE, the messages to FILE.json\n"
    "  /load FILE    load a chat saved with /save (same model)\n"
    "  /help         these commands\n"
    "  /quit         quit (also Ctrl-D, or Ctrl-C on an empty line)\n"
    "  //text        send a message that begins with '/'\n";

void usage(FILE* out) {
  std::fprintf(out,
               "usage: chat [-m] MODEL.gguf [-sys TEXT] [options]\n"
               "  -m, --model FILE        GGUF model (the -m is optional)\n"
               "  -sys, --system TEXT     system prompt\n"
               "      --template NAME|FILE  chat template: a built-in (chatml, llama3, gemma, phi3) or a Jinja file;\n"
               "                          default: the model's own, ChatML when it has none\n"
               "  -n, --n-predict N       most tokens per reply (default -1: until the model ends it)\n"
               "  -r, --stop TEXT         end a reply at TEXT (may repeat); the model's end-of-generation\n"
               "                          tokens always end it\n"
               "  -c, --ctx-size N        context size (default: the model's, at most 4096); when full, the\n"
               "                          oldest turns after the system prompt are dropped\n"
               "  -t, --threads N         threads (default 0: one per core of the fastest cluster(s))\n"
               "      --cpus SPEC         a CPU list such as 4-7\n"
               "%s%s"
               "  -v, --verbose           log the kernel plan and thread placement\n"
               "Lines read from stdin are user turns (a pipe works: one turn per line). Commands:\n%s"
               "Ctrl-C stops a reply (the part shown is kept); on an empty line it quits.\n",
               tools::kSamplerUsage, tools::kGrammarUsage, kCommands);
}

Options parse(int argc, char** argv) {
  Options o;
  tools::Args a(argc, argv);
  while (!a.done()) {
    std::string stop;
    if (a.model(o.model) || a.option({"-sys", "--system"}, o.system_prompt) ||
        a.option({"--template"}, o.template_arg) || a.option({"-n", "--n-predict"}, o.n_predict) ||
        a.option({"-c", "--ctx-size"}, o.n_ctx) || a.option({"-t", "--threads"}, o.n_threads) ||
        a.option({"--cpus"}, o.cpus) || tools::parse_sampler_option(a, o.sampler) ||
        tools::parse_grammar_option(a, o.grammar)) {
      continue;
    }
    if (a.option({"-r", "--stop"}, stop)) {
      o.stops.push_back(stop);
    } else if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else {
      a.unknown();
    }
  }
  if (o.model.empty()) throw tools::ArgError("no model given (-m MODEL.gguf)");
  if (o.n_predict == 0 || o.n_predict < -1 || o.n_predict > UINT32_MAX) {
    throw tools::ArgError("-n must be a positive count, or -1 for no limit");
  }
  if (o.n_ctx < 0 || o.n_ctx > UINT32_MAX) throw tools::ArgError("-c is out of range");
  if (o.n_threads < 0 || o.n_threads > INT32_MAX) throw tools::ArgError("-t must be >= 0");
  try {
    o.sampler.validate();
  } catch (const std::exception& e) {
    throw tools::ArgError(e.what());
  }
  o.grammar.load();  // the file's errors before the model loads
  return o;
}

// Notices and figures on stderr, dimmed on a terminal so the reply stands out.
class Status {
 public:
  Status() : dim_(::isatty(2) == 1) {}
  void say(const std::string& text) const {
    std::fflush(stdout);
    std::fprintf(stderr, "%schat: %s%s\n", dim_ ? "\x1b[2m" : "", text.c_str(), dim_ ? "\x1b[0m" : "");
  }

 private:
  bool dim_;
};

std::string rate(uint64_t tokens, double ms) {
  if (tokens == 0 || ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f t/s", 1000.0 * static_cast<double>(tokens) / ms);
  return buf;
}

const char* reason_text(engine_chat_stop_reason r) {
  switch (r) {
    case ENGINE_CHAT_END_OF_GENERATION: return "end of generation";
    case ENGINE_CHAT_STOP_STRING: return "stop string";
    case ENGINE_CHAT_MAX_TOKENS: return "-n reached";
    case ENGINE_CHAT_CALLBACK: return "interrupted";
    case ENGINE_CHAT_CONTEXT_FULL: return "context full";
  }
  return "?";
}

// One line: "prefill 12 tokens (40 in the prompt, 28 reused), 850.0 t/s |
// TTFT 15.2 ms | decode 8 tokens, 120.5 t/s | end of generation".
std::string figures(const TurnFigures& f) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", f.first_text_ms);
  return "prefill " + tools::plural(static_cast<int64_t>(f.n_prefilled), "token") + " (" + std::to_string(f.n_prompt) +
         " in the prompt, " + std::to_string(f.n_reused) + " reused), " + rate(f.n_prefilled, f.prefill_ms) +
         " | TTFT " + (f.first_text_ms < 0 ? std::string("-") : std::string(ms)) + " | decode " +
         tools::plural(f.n_decoded, "token") + ", " + rate(f.n_decoded, f.decode_ms) + " | " +
         (f.interrupted ? "interrupted" : reason_text(f.reason));
}

class Repl {
 public:
  Repl(Conversation& chat, LineReader& input) : chat_(chat), input_(input) {}

  // The exit code: 0; 1 when input was piped and a turn or command failed
  // (a script learns of it).
  int run() {
    out_.text = [this](std::string_view piece) {
      at_line_start_ = false;
      reply_shown_ = true;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
    out_.notice = [this](const std::string& text) {
      end_line();
      status_.say(text);
    };
    std::string line;
    bool had_text = false;
    for (;;) {
      g_interrupted = 0;
      const LineReader::Result r = input_.read("> ", line, had_text);
      if (r == LineReader::Result::end_of_input) break;
      if (r == LineReader::Result::interrupted) {
        if (had_text) continue;  // the line is dropped; an empty line quits
        break;
      }
      if (line.empty()) continue;
      if (!handle(line)) break;
    }
    return failed_ && !input_.is_terminal() ? 1 : 0;
  }

 private:
  // False to quit.
  bool handle(const std::string& line) {
    try {
      if (line[0] != '/' || line.starts_with("//")) {
        turn([&] { return chat_.say(line[0] == '/' ? line.substr(1) : line, out_); });
        return true;
      }
      const size_t space = line.find(' ');
      const std::string command = line.substr(0, space);
      const size_t arg_start = space == std::string::npos ? line.size() : line.find_first_not_of(' ', space);
      const std::string arg = arg_start == std::string::npos ? "" : line.substr(arg_start);
      if (command == "/quit" || command == "/exit") return false;
      if (command == "/help") {
        std::fputs(kCommands, stderr);
      } else if (command == "/reset") {
        chat_.reset();
        status_.say("back to the system prompt alone");
      } else if (command == "/regen") {
        turn([&] { return chat_.regenerate(out_); });
      } else if (command == "/save" || command == "/load") {
        if (arg.empty()) throw Refused(command + " needs a file name (" + command + " FILE)");
        if (command == "/save") {
          chat_.save(arg);
          status_.say("saved " + std::to_string(chat_.messages().size()) + " messages: the session to " + arg +
                      ", the messages to " + arg + ".json");
        } else {
          chat_.load(arg);
          status_.say("loaded " + std::to_string(chat_.messages().size()) + " messages from " + arg +
                      ".json and the session from " + arg);
        }
      } else {
        throw Refused("unknown command '" + command +
                      "' (/help lists them; a message that begins with '/' is sent as //text)");
      }
    } catch (const std::exception& e) {
      end_line();
      status_.say(e.what());
      failed_ = true;
    }
    return true;
  }

  template <class Fn>
  void turn(Fn&& fn) {
    reply_shown_ = false;
    TurnFigures f;
    {
      const RawTerminal quiet(input_.is_terminal() ? input_.fd() : -1);
      f = fn();
    }
    // Every reply ends a line on stdout, an empty one too: a script reading
    // the replies finds one per turn.
    if (f.answered && !reply_shown_) at_line_start_ = false;
    if (f.interrupted && input_.is_terminal()) {
      std::fflush(stdout);
      input_.echo("^C");  // as a terminal shows it
      at_line_start_ = false;
    }
    end_line();
    if (f.interrupted) {
      status_.say(f.answered ? "interrupted: the reply so far is kept"
                             : "interrupted during the prefill: the conversation is as it was");
    }
    if (f.answered) status_.say(figures(f));
  }

  // The reply's last line ended, so what follows starts a line.
  void end_line() {
    if (!at_line_start_) std::fputs("\n", stdout);
    std::fflush(stdout);
    at_line_start_ = true;
  }

  Conversation& chat_;
  LineReader& input_;
  Output out_;
  Status status_;
  bool failed_ = false;
  bool at_line_start_ = true;
  bool reply_shown_ = false;  // text of this turn's reply was written
};

int run(const Options& o) {
  tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
  Settings settings;
  settings.options = tools::chat_template_option(o.template_arg);
  settings.system_prompt = o.system_prompt;
  settings.max_tokens = o.n_predict;
  settings.stops = o.stops;
  api::Model model(o.model);
  engine_session_params sp = engine_session_default_params();
  sp.n_ctx = static_cast<uint32_t>(o.n_ctx);
  sp.n_threads = static_cast<int32_t>(o.n_threads);
  sp.cpus = o.cpus.empty() ? nullptr : o.cpus.c_str();
  api::Session session(model, sp);
  api::Sampler sampler(tools::c_sampler_params(o.sampler));
  if (!o.grammar.gbnf.empty()) sampler.set_grammar(model, o.grammar.gbnf);
  Conversation chat(model, session, sampler, std::move(settings));
  install_interrupt_handler();
  LineReader input(0, ::isatty(1) == 1 ? 1 : 2);
  if (input.is_terminal()) {
    Status().say(o.model + ", context " + std::to_string(chat.n_ctx()) +
                 " tokens; /help lists the commands, Ctrl-C stops a reply");
  }
  return Repl(chat, input).run();
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("chat", usage, argc, [&] { return run(parse(argc, argv)); });
}
