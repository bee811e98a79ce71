// The sampler's command-line options (run, and any tool that samples): parsed
// into engine::SamplerParams with range checks, so a value that does not fit
// its field is an error naming the option instead of a silent wrap-around.
#pragma once

#include <optional>
#include <string>

#include "engine/api/engine.h"
#include "engine/grammar/gbnf.h"
#include "engine/runtime/sampler.h"
#include "tools/common/args.h"

namespace tools {

// The usage lines of the options below.
extern const char* const kSamplerUsage;

// True (and consumed) when the next argument is a sampler option:
// -s/--seed, --temp, --top-k, --top-p, --min-p, --repeat-penalty,
// --repeat-last-n. Throws ArgError naming the option for a value that is not
// a number or does not fit; SamplerParams::validate() checks the rest.
bool parse_sampler_option(Args& args, engine::SamplerParams& params);

// The same settings for the C API's sampler.
inline engine_sampler_params c_sampler_params(const engine::SamplerParams& s) {
  return engine_sampler_params{s.temperature, s.top_k, s.top_p, s.min_p, s.repeat_penalty, s.repeat_last_n, s.seed};
}

// Structured output: --grammar FILE (GBNF, start rule "root") or
// --json-schema FILE, at most one.
extern const char* const kGrammarUsage;
struct GrammarArgs {
  std::string gbnf_path, schema_path;
  // What load() read: the GBNF to sample under ("" for none: the file's text,
  // or the grammar of the schema in it) and that grammar parsed.
  std::string gbnf;
  std::optional<engine::grammar::Grammar> parsed;
  // Reads and parses the file, before the model loads so its errors come
  // first; throws naming the file and the problem.
  void load();
};
// Giving both options is an ArgError at the second.
bool parse_grammar_option(Args& args, GrammarArgs& grammar);

}  // namespace tools
