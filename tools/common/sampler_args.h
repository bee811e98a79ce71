// The sampler's command-line options (run, and any tool that samples): parsed
// into engine::SamplerParams with range checks, so a value that does not fit
// its field is an error naming the option instead of a silent wrap-around.
#pragma once

#include <string>

#include "engine/api/engine.h"
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
  // The GBNF to sample under, "" for none: the file's text, or the grammar of
  // the schema in it. Throws naming the file and the problem.
  std::string gbnf() const;
};
bool parse_grammar_option(Args& args, GrammarArgs& grammar);

}  // namespace tools
