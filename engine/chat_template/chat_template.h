// The engine's own renderer of GGUF chat templates (tokenizer.chat_template),
// a small Jinja: it renders a template as Hugging Face's apply_chat_template
// sets up jinja2 (trim_blocks, lstrip_blocks, loop controls, `{% generation %}`,
// tojson without ASCII escaping, raise_exception, strftime_now).
//
// Templates come from model files, so evaluation is sandboxed: no file or
// environment access exists in the language, and every resource a template
// can consume is bounded (Limits). Exceeding a bound is Error(limit) naming it.
//
//   lexer.h -> parser.h (ast.h) -> evaluator.h; values in value.h; filters,
//   tests, methods and globals in builtins.h; JSON in json.h.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/chat_template/error.h"
#include "engine/chat_template/value.h"

namespace engine::chat_template {

struct Limits {
  int64_t max_steps = 20'000'000;            // expressions and statements evaluated, and items of
                                             // the lists built (so also a bound on their memory)
  size_t max_output_bytes = 16u << 20;       // the output, and any one string built
  int max_depth = 200;                       // nesting of statements, and of an expression's parts
  int max_eval_depth = 500;                  // nesting of evaluation: statements, expressions and
                                             // macro calls together (what the native stack holds)
  int64_t max_loop_iterations = 2'000'000;   // iterations of all loops, and items of any one list built
};

struct Options {
  Limits limits;
  // The clock of strftime_now(); empty: the local time now.
  std::function<std::tm()> now;
};

// A parsed template, reusable for many renders.
class Template {
 public:
  // Throws Error(syntax) or Error(limit).
  explicit Template(std::string_view source, const Options& options = {});
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Renders with `variables` (a dict) as the template's globals. Throws Error.
  std::string render(const Value& variables) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The variables apply_chat_template gives a template, from a conversation as
// in ../shared/chat-templates/conversations: `messages`, `add_generation_prompt`,
// `bos_token`, `eos_token`, `tools` when present, and the entries of `extra`.
// Throws ValueError when `conversation` is not a dict with a `messages` list.
Value conversation_variables(const Value& conversation);

}  // namespace engine::chat_template
