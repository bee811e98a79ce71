#include "tools/common/sampler_args.h"

#include <cstdint>
#include <string>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"

namespace tools {

const char* const kSamplerUsage =
    "  -s, --seed N            sampler seed (default: random, printed)\n"
    "      --temp T            temperature, 0 = greedy (default 0.8)\n"
    "      --top-k N           (default 40, 0 = off)\n"
    "      --top-p P           (default 0.95, 1 = off)\n"
    "      --min-p P           (default 0.05, 0 = off)\n"
    "      --repeat-penalty P  (default 1.0 = off)\n"
    "      --repeat-last-n N   tokens the penalty looks back (default 64)\n";

namespace {

int64_t in_range(const char* option, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    throw ArgError(std::string(option) + ": " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." +
                   std::to_string(hi));
  }
  return v;
}

}  // namespace

bool parse_sampler_option(Args& a, engine::SamplerParams& p) {
  int64_t i = 0;
  if (a.option({"-s", "--seed"}, i)) {
    p.seed = static_cast<uint32_t>(in_range("--seed", i, 0, UINT32_MAX));
    return true;
  }
  if (a.option({"--top-k"}, i)) {
    p.top_k = static_cast<int32_t>(in_range("--top-k", i, INT32_MIN, INT32_MAX));
    return true;
  }
  if (a.option({"--repeat-last-n"}, i)) {
    p.repeat_last_n = static_cast<int32_t>(in_range("--repeat-last-n", i, 0, INT32_MAX));
    return true;
  }
  return a.option({"--temp"}, p.temperature) || a.option({"--top-p"}, p.top_p) || a.option({"--min-p"}, p.min_p) ||
         a.option({"--repeat-penalty"}, p.repeat_penalty);
}

const char* const kGrammarUsage =
    "      --grammar FILE      sample only text of this GBNF grammar (start rule root)\n"
    "      --json-schema FILE  sample only JSON documents this schema validates\n";

bool parse_grammar_option(Args& a, GrammarArgs& g) {
  if (!a.option({"--grammar"}, g.gbnf_path) && !a.option({"--json-schema"}, g.schema_path)) return false;
  if (!g.gbnf_path.empty() && !g.schema_path.empty()) throw ArgError("give --grammar or --json-schema, not both");
  return true;
}

void GrammarArgs::load() {
  const std::string& path = gbnf_path.empty() ? schema_path : gbnf_path;
  if (path.empty()) return;
  const std::string text = read_text_file(path);
  try {
    gbnf = gbnf_path.empty() ? engine::grammar::json_schema_to_gbnf(text) : text;
    parsed = engine::grammar::parse_gbnf(gbnf);  // its errors now, naming the file
  } catch (const engine::Error& e) {
    throw engine::Error(path + ": " + e.what());
  }
}

}  // namespace tools
