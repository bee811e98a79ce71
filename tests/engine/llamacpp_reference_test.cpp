// End to end against llama.cpp for the families ../shared has no models of:
// each model of tests/reference/llamacpp/models.json is written at test time
// by synth with the arguments listed there (the same ones COMMANDS.md gave the
// synth tool when the references were made), checked to be byte for byte the
// file llama.cpp read (its SHA-256 is in the reference), and compared with
// llama.cpp's logits the way ../shared/models/reference/README.md prescribes
// (tests/support/logit_compare.h), within the tolerances models.json copies
// from ../shared's manifest.json (or a model's own, where models.json says why). The sequences are longer than three
// sliding windows, so prefill across the window and decode far past it are
// both checked. A model with a "kv" list runs once per KV cache type listed
// (q8_0, q4_0), against llama.cpp's logits with that cache
// (<name>-<type>-<kv>.llamacpp.json); the engine takes the type from the
// reference's config (logit_compare.h). A model with a "prompts" list also runs
// once per prompt length listed, a prompt of that many tokens and a greedy
// decode of "decode" tokens after it (<name>-<type>-p<length>.llamacpp.json,
// holding the last 8 prompt rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "tests/support/json.h"
#include "tests/support/logit_compare.h"
#include "tests/support/shared_data.h"
#include "tools/bench/sha256.h"
#include "tools/common/model_writing/synth_args.h"

namespace {

const std::filesystem::path kDir = std::filesystem::path(ENGINE_SOURCE_DIR) / "tests/reference/llamacpp";

struct Case {
  std::string model;  // "gemma2-d256"
  std::string type;   // "Q4_K_M"
  std::string synth;  // synth's arguments, without --type and -o
  std::string kv;     // "q8_0": llama.cpp's reference ran with that KV cache; empty: F32
  engine_test::LogitTolerance tol;
  bool native_only = false;  // models.json "native_only": a variant whose kernels another model covers
  int prompt = 0;             // a "prompts" length; 0: the common 32-token prompt
  bool first_of_variant = false;  // the first model in models.json with this variant
  // "Q4_K_M", or "F32-q8_0": the key of the case's own tolerance.
  std::string variant() const { return kv.empty() ? type : type + "-" + kv; }
  std::string name() const { return model + "-" + variant() + (prompt > 0 ? "-p" + std::to_string(prompt) : ""); }
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

engine_test::LogitTolerance tolerance(const engine_test::Json& t) {
  return {t["rel_max"].number(), t["top1_min"].number(), t["kld_max"].number()};
}

// Each model in each of its types (and KV cache types, where it lists them),
// with the type's tolerance: the model's own where it gives one (models.json
// says why; a quantized cache's always), else the common one.
std::vector<Case> cases() {
  std::vector<Case> out;
  std::vector<std::string> variants_seen;
  const engine_test::Json m = engine_test::Json::parse_file(kDir / "models.json");
  for (const engine_test::Json& model : m["models"].array()) {
    std::vector<int> prompts{0};
    if (model.has("prompts")) {
      for (const engine_test::Json& p : model["prompts"].array()) prompts.push_back(static_cast<int>(p.number()));
    }
    std::vector<std::string> kvs{""};
    if (model.has("kv")) {
      kvs.clear();
      for (const engine_test::Json& kv : model["kv"].array()) kvs.push_back(kv.string());
    }
    for (const engine_test::Json& type : model["types"].array()) {
      for (const std::string& kv : kvs) {
        for (int prompt : prompts) {
          Case c{model["name"].string(), type.string(), model["synth"].string(), kv, {},
                 model.has("native_only") && model["native_only"].boolean(), prompt};
          const bool own = model.has("tolerances") && model["tolerances"].has(c.variant());
          c.tol = tolerance(own ? model["tolerances"][c.variant()] : m["tolerances"][c.variant()]);
          if (!c.native_only && prompt == 0 &&
              std::find(variants_seen.begin(), variants_seen.end(), c.variant()) == variants_seen.end()) {
            c.first_of_variant = true;
            variants_seen.push_back(c.variant());
          }
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

// Writes the model as `synth <args> --type T -o path` would.
void write_model(const Case& c, const std::filesystem::path& path) {
  std::vector<std::string> args{"synth"};
  std::istringstream words(c.synth);
  for (std::string w; words >> w;) args.push_back(w);
  for (const std::string& w : {std::string("--type"), c.type, std::string("-o"), path.string(),
                               std::string("--no-progress")}) {
    args.push_back(w);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(argv.size()), argv.data());
  cmd.options.out = nullptr;
  tools::synth_model(cmd.options);
}

// The case's model file and its SHA-256: written by synth into dir, or, when
// $ENGINE_TEST_MODEL_CACHE names a folder, taken from there once an earlier run
// (another tree, another qemu CPU) has written it. Under qemu, synth's K-quant
// search is emulated floating point: writing gemma3-d256 as Q4_K_M took 10.4 s
// there against 0.4 s natively. A file enters the cache only when its SHA-256
// is the reference's, so a mismatch is always that of a freshly written file;
// scripts/test.sh empties the cache before each run, so every run checks once
// that synth still writes these bytes.
struct ModelFile {
  std::filesystem::path path;
  std::string sha256;
};
ModelFile model_file(const Case& c, const std::string& sha, const std::filesystem::path& dir) {
  const char* cache = std::getenv("ENGINE_TEST_MODEL_CACHE");
  std::filesystem::path cached;
  if (cache != nullptr && *cache != '\0') {
    cached = std::filesystem::path(cache) / (c.model + "-" + c.type + "-" + sha.substr(0, 16) + ".gguf");
    if (std::filesystem::exists(cached)) {
      ModelFile hit{cached, bench::sha256_file(cached.string())};
      if (hit.sha256 == sha) return hit;
    }
  }
  ModelFile fresh{dir / (c.model + "-" + c.type + ".gguf"), ""};
  write_model(c, fresh.path);
  fresh.sha256 = bench::sha256_file(fresh.path.string());
  if (!cached.empty() && fresh.sha256 == sha) {
    // A unique name in the cache, then a rename: tests running side by side
    // never see a half-written file.
    std::filesystem::create_directories(cached.parent_path());
    const std::filesystem::path partial = cached.string() + "." + dir.filename().string();
    std::filesystem::copy_file(fresh.path, partial, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(partial, cached);
  }
  return fresh;
}

class LlamaCppReference : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppReference, AgreesWithLlamaCppWithinTheManifestTolerances) {
  const Case& c = GetParam();
  // Under qemu (ENGINE_QEMU_CPU, set by the cross build's registration) a
  // case costs 0.4-1.2 s in Q4_K_M and the other K- and I-quants, 2-6 s in
  // Q8_0 and Q4_0 and 4-8 s in F32 and F16: qemu emulates every float
  // instruction in software, and those types run one or more per 32 weights
  // (qemu max, 2026-12-06). What a type changes is its matmul and row-dequant
  // kernels, which kernel_tier_test checks on every tier; what a family
  // changes is the forward pass and its row operations, the same for every
  // type. So under qemu each family runs in F32 (the tight tolerances, which
  // a row operation's error cannot hide under) and Q4_K_M, each type and KV
  // cache type runs once, in the first model listing it, and the long prompts
  // in Q4_K_M; natively every case runs. a64fx runs none (its float kernels
  // are the slowest to emulate and ../shared's references already run there),
  // and the variants marked native_only (llama's, phi3's short factors) run
  // natively only, their kernels being those of another model here. Under
  // qemu max every case but the long prompts' took 331 s, this subset 98 s.
  if (const char* cpu = std::getenv("ENGINE_QEMU_CPU"); cpu != nullptr) {
    if (std::string(cpu) == "a64fx") GTEST_SKIP() << "not run under qemu -cpu a64fx";
    if (c.native_only) GTEST_SKIP() << c.model << " runs natively only (models.json native_only)";
    if (c.prompt > 0 && c.type != "Q4_K_M") {
      GTEST_SKIP() << "a " << c.prompt << "-token prompt in " << c.type << " runs natively only (Q4_K_M under qemu)";
    }
    if (c.prompt == 0 && c.type != "F32" && c.type != "Q4_K_M" && !c.first_of_variant) {
      GTEST_SKIP() << c.variant() << " runs under qemu in the first model listing it; " << c.model
                   << " runs natively in it, and in F32 and Q4_K_M everywhere";
    }
  }
  const engine_test::Json ref = engine_test::Json::parse_file(kDir / (c.name() + ".llamacpp.json"));
  const engine_test::LogitTolerance& tol = c.tol;

  const std::filesystem::path dir = engine_test::temp_dir("llamacpp-reference");
  const std::string sha = ref["model_sha256"].string();
  const ModelFile model = model_file(c, sha, dir);
  ASSERT_EQ(model.sha256, sha)
      << "synth no longer writes the file the reference was computed on; regenerate the references "
         "(tests/reference/llamacpp/COMMANDS.md)";
  const engine_test::LogitComparison r = engine_test::compare_logits(model.path.string(), ref, tol);
  std::filesystem::remove_all(dir);
  std::printf("%s: %s\n", c.name().c_str(), r.describe(tol).c_str());
  EXPECT_EQ(r.rows, ref["logits"].size() + ref["greedy_logits"].size() - 1);
  EXPECT_TRUE(r.all_finite);
  EXPECT_LE(r.rel_max, tol.rel_max);
  EXPECT_GE(r.top1, tol.top1_min);
  EXPECT_LE(r.kld_mean, tol.kld_max);
  EXPECT_EQ(r.greedy_mismatch, -1) << "free-running greedy differs before the first near-tie";
}

// Until models.json lists a model the suite has no cases, which is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LlamaCppReference);
INSTANTIATE_TEST_SUITE_P(Models, LlamaCppReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           std::string s = param.param.name();
                           std::replace_if(s.begin(), s.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return s;
                         });

}  // namespace
