// chat-template: renders a chat template with a conversation and prints the
// prompt, as the engine will give it to the model.
//
//   chat-template --template FILE.jinja --conversation CONV.json
//   chat-template -m MODEL.gguf --conversation CONV.json    (tokenizer.chat_template)
//   chat-template --builtin NAME --conversation CONV.json   (chatml, llama3, gemma, phi3)
//
// The conversation is JSON: {"messages": [...], "add_generation_prompt": true,
// "bos_token": "<s>", "eos_token": "</s>", "tools": [...], "extra": {...}}.
// The prompt goes to stdout byte for byte (no newline added); an error,
// including one the template raises, goes to stderr with exit code 1.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "engine/chat/builtin_templates.h"
#include "engine/chat_template/chat_template.h"
#include "engine/chat_template/json.h"
#include "gguf/file.h"
#include "tools/common/args.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: chat-template (--template FILE.jinja | -m MODEL.gguf | --builtin NAME) --conversation CONV.json\n"
               "  --template FILE      the chat template (Jinja) to render\n"
               "  -m, --model FILE     render the GGUF's tokenizer.chat_template instead\n"
               "  --builtin NAME       render one of the engine's built-in templates: chatml, llama3, gemma, phi3\n"
               "  --conversation FILE  JSON: messages, add_generation_prompt, bos_token, eos_token,\n"
               "                       tools, extra (further template variables)\n"
               "  --now \"YYYY-MM-DD[ HH:MM:SS]\"  the time strftime_now() sees (default: the local time)\n");
}

struct Options {
  std::string template_path, model, builtin, conversation, now;
};

// "2024-07-26 12:00:00" or "2024-07-26" as a calendar time with its weekday
// and day of the year filled in (strftime's %a and %j need them).
std::tm parse_now(const std::string& text) {
  std::tm tm{};
  int n = std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                      &tm.tm_sec);
  if (n != 3 && n != 6) throw tools::ArgError("--now wants \"YYYY-MM-DD\" or \"YYYY-MM-DD HH:MM:SS\", not '" + text + "'");
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = timegm(&tm);
  std::tm normalized{};
  gmtime_r(&t, &normalized);
  return normalized;
}

Options parse(int argc, char** argv) {
  Options o;
  tools::Args a(argc, argv);
  while (!a.done()) {
    if (a.option({"--template", "-t"}, o.template_path) || a.option({"--conversation", "-c"}, o.conversation) ||
        a.option({"--now"}, o.now) || a.option({"--builtin"}, o.builtin))
      continue;
    if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    }
    if (!a.model(o.model)) a.unknown();
  }
  if (!o.template_path.empty() + !o.model.empty() + !o.builtin.empty() != 1)
    throw tools::ArgError("give one of --template FILE.jinja, -m MODEL.gguf and --builtin NAME");
  if (o.conversation.empty()) throw tools::ArgError("no conversation given (--conversation CONV.json)");
  if (!o.now.empty()) parse_now(o.now);  // a usage error before any work
  return o;
}

int render(const Options& o) {
  namespace ct = engine::chat_template;
  std::string source;
  if (!o.template_path.empty()) {
    source = tools::read_text_file(o.template_path);
  } else if (!o.builtin.empty()) {
    source = std::string(engine::chat::builtin_template(o.builtin));
  } else {
    const gguf::File file = gguf::File::open(o.model);
    auto text = file.find_string("tokenizer.chat_template");
    if (!text) throw std::runtime_error(o.model + " has no tokenizer.chat_template");
    source = std::string(*text);
  }
  ct::Value conversation;
  try {
    conversation = ct::conversation_variables(ct::parse_json(tools::read_text_file(o.conversation)));
  } catch (const ct::ValueError& e) {
    throw std::runtime_error(o.conversation + ": " + e.what());
  }
  ct::Options options;
  if (!o.now.empty()) options.now = [tm = parse_now(o.now)] { return tm; };
  const std::string prompt = ct::Template(source, options).render(conversation);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  if (std::fflush(stdout) != 0) throw std::runtime_error("cannot write stdout");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("chat-template", usage, argc, [&] { return render(parse(argc, argv)); });
}
