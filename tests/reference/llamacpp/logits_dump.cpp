// logits_dump: llama.cpp's logits for a token sequence, in the JSON format of
// ../shared/models/reference (format "logits_dump/1"): every prefill row, then
// greedy decoding one token per call. Written against llama.cpp's public
// llama.h and built beside the project, never inside it; COMMANDS.md here has
// the exact commands. The CI never builds it: its output (the *.llamacpp.json
// files here) is what the tests read.
//
//   logits_dump MODEL.gguf OUT.json --tokens 1,5,9 [--greedy 16] [--ctx 256]
//               [--ubatch 64] [--kv f32|f16|q8_0|q4_0] [--keep-prompt-rows N]
//               [--sha256 HEX] [--commit HASH]
//
// --keep-prompt-rows N writes only the last N prefill rows ("logits_positions"
// names them), for long prompts whose every row would make a file of
// megabytes; the whole prompt is still one llama_decode call.
//
// The settings are the most exact llama.cpp has: F32 K and V cache, flash
// attention off, one thread, the whole prompt in one llama_decode call
// (n_batch = n_ubatch >= the prompt), a full-size sliding-window cache.
// --kv sets the type of both K and V; a quantized V cache exists in llama.cpp
// only with flash attention (llama_init_from_model refuses it otherwise), so
// q8_0 and q4_0 turn flash attention on. Its CPU kernel
// (ggml_compute_forward_flash_attn_ext_f16_one_chunk) then quantizes each
// query row to Q8_0 blocks, takes the scores as Q8_0 x K-block integer dots,
// and accumulates dequantized V rows in F32 with an online softmax. The
// Walsh-Hadamard rotation llama.cpp applies to Q, K and V before a quantized
// cache (llama-kv-cache.cpp: attn_rot_k / attn_rot_v, for head sizes that are
// multiples of 64) is turned off (LLAMA_ATTN_ROT_DISABLE=1): the references
// are of the plain ggml blocks, the cache the engine keeps.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "logits_dump: %s\n", what.c_str());
  std::exit(1);
}

std::vector<llama_token> parse_tokens(const char* s) {
  std::vector<llama_token> out;
  while (*s != '\0') {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s) die(std::string("bad --tokens at '") + s + "'");
    out.push_back(static_cast<llama_token>(v));
    s = *end == ',' ? end + 1 : end;
  }
  return out;
}

void write_row(FILE* f, const float* row, int n) {
  std::fputc('[', f);
  for (int j = 0; j < n; ++j) std::fprintf(f, j ? ",%.9g" : "%.9g", static_cast<double>(row[j]));
  std::fputc(']', f);
}

int argmax(const float* row, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j) {
    if (row[j] > row[best]) best = j;
  }
  return best;
}

struct KvChoice {
  const char* name;
  ggml_type type;
  bool flash_attn;  // a quantized V cache needs flash attention
};
KvChoice parse_kv(const std::string& s) {
  for (const KvChoice& c : {KvChoice{"f32", GGML_TYPE_F32, false}, KvChoice{"f16", GGML_TYPE_F16, false},
                            KvChoice{"q8_0", GGML_TYPE_Q8_0, true}, KvChoice{"q4_0", GGML_TYPE_Q4_0, true}}) {
    if (s == c.name) return c;
  }
  die("--kv must be f32, f16, q8_0 or q4_0, not '" + s + "'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    die("usage: logits_dump MODEL.gguf OUT.json --tokens a,b,c [--greedy N] [--ctx N] [--ubatch N] [--kv TYPE] "
        "[--keep-prompt-rows N]");
  }
  const char* model_path = argv[1];
  const char* out_path = argv[2];
  std::vector<llama_token> tokens;
  int n_greedy = 16, n_ctx = 256, n_ubatch = 64, keep_rows = -1;
  std::string sha256 = "", commit = "";
  KvChoice kv = parse_kv("f32");
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) die("missing value after " + a);
    const char* v = argv[++i];
    if (a == "--tokens") tokens = parse_tokens(v);
    else if (a == "--greedy") n_greedy = std::atoi(v);
    else if (a == "--ctx") n_ctx = std::atoi(v);
    else if (a == "--ubatch") n_ubatch = std::atoi(v);
    else if (a == "--kv") kv = parse_kv(v);
    else if (a == "--keep-prompt-rows") keep_rows = std::atoi(v);
    else if (a == "--sha256") sha256 = v;
    else if (a == "--commit") commit = v;
    else die("unknown option " + a);
  }
  if (tokens.empty()) die("--tokens is required");
  if (static_cast<int>(tokens.size()) > n_ubatch) die("the prompt is longer than --ubatch");
  if (static_cast<int>(tokens.size()) + n_greedy > n_ctx) die("the prompt and the decode do not fit --ctx");

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(model_path, mp);
  if (model == nullptr) die(std::string("cannot load ") + model_path);
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(n_ctx);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n_ubatch);
  cp.n_seq_max = 1;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.type_k = cp.type_v = kv.type;
  cp.flash_attn_type = kv.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.swa_full = true;
  if (kv.flash_attn) setenv("LLAMA_ATTN_ROT_DISABLE", "1", 1);  // read when the cache is made
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) die("cannot create a context");
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  const int n_prompt = static_cast<int>(tokens.size());
  llama_batch batch = llama_batch_init(n_ubatch, 0, 1);
  for (int p = 0; p < n_prompt; ++p) {
    batch.token[p] = tokens[p];
    batch.pos[p] = p;
    batch.n_seq_id[p] = 1;
    batch.seq_id[p][0] = 0;
    batch.logits[p] = 1;
  }
  batch.n_tokens = n_prompt;
  if (llama_decode(ctx, batch) != 0) die("prefill failed");
  std::vector<std::vector<float>> prefill(n_prompt);
  for (int p = 0; p < n_prompt; ++p) {
    const float* row = llama_get_logits_ith(ctx, p);
    prefill[p].assign(row, row + n_vocab);
  }

  std::vector<int> greedy;
  std::vector<std::vector<float>> greedy_rows;
  greedy_rows.push_back(prefill.back());
  greedy.push_back(argmax(prefill.back().data(), n_vocab));
  for (int i = 1; i < n_greedy; ++i) {
    batch.token[0] = greedy.back();
    batch.pos[0] = n_prompt - 1 + i;
    batch.n_seq_id[0] = 1;
    batch.seq_id[0][0] = 0;
    batch.logits[0] = 1;
    batch.n_tokens = 1;
    if (llama_decode(ctx, batch) != 0) die("decode failed");
    const float* row = llama_get_logits_ith(ctx, 0);
    greedy_rows.emplace_back(row, row + n_vocab);
    greedy.push_back(argmax(row, n_vocab));
  }

  char desc[256];
  llama_model_desc(model, desc, sizeof desc);
  char arch[64] = "";
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch);
  FILE* f = std::fopen(out_path, "w");
  if (f == nullptr) die(std::string("cannot write ") + out_path);
  const char* slash = std::strrchr(model_path, '/');
  std::fprintf(f, "{\n \"model_file\": \"%s\", \"model_sha256\": \"%s\",\n", slash ? slash + 1 : model_path,
               sha256.c_str());
  std::fprintf(f, " \"format\": \"logits_dump/1\", \"model_desc\": \"%s\", \"arch\": \"%s\", \"n_vocab\": %d,\n", desc,
               arch, n_vocab);
  std::fprintf(f,
               " \"config\": {\"kv_type_k\": \"%s\", \"kv_type_v\": \"%s\", \"flash_attn\": \"%s\", \"n_threads\": 1,"
               " \"n_ctx\": %d, \"n_ubatch\": %d, \"swa_full\": true,%s \"llama_cpp_commit\": \"%s\"},\n",
               kv.name, kv.name, kv.flash_attn ? "on" : "off", n_ctx, n_ubatch,
               kv.flash_attn ? " \"attn_rot\": \"off\"," : "", commit.c_str());
  std::fprintf(f, " \"system_info\": \"%s\",\n \"tokens\": [", llama_print_system_info());
  for (int p = 0; p < n_prompt; ++p) std::fprintf(f, p ? ", %d" : "%d", tokens[p]);
  const int first_row = keep_rows >= 0 && keep_rows < n_prompt ? n_prompt - keep_rows : 0;
  std::fprintf(f, "],\n \"logits_positions\": [");
  for (int p = first_row; p < n_prompt; ++p) std::fprintf(f, p > first_row ? ", %d" : "%d", p);
  std::fprintf(f, "],\n \"logits\": [\n");
  for (int p = first_row; p < n_prompt; ++p) {
    write_row(f, prefill[p].data(), n_vocab);
    std::fprintf(f, p + 1 < n_prompt ? ",\n" : "\n");
  }
  std::fprintf(f, " ],\n \"greedy\": [");
  for (size_t i = 0; i < greedy.size(); ++i) std::fprintf(f, i ? ", %d" : "%d", greedy[i]);
  std::fprintf(f, "],\n \"greedy_logits_top5\": [\n");
  for (size_t i = 0; i < greedy_rows.size(); ++i) {
    std::vector<float> row = greedy_rows[i];
    std::fputc('[', f);
    for (int k = 0; k < 5; ++k) {
      const int best = argmax(row.data(), n_vocab);
      std::fprintf(f, k ? ",[%d,%.9g]" : "[%d,%.9g]", best, static_cast<double>(row[best]));
      row[best] = -INFINITY;
    }
    std::fprintf(f, i + 1 < greedy_rows.size() ? "],\n" : "]\n");
  }
  std::fprintf(f, " ],\n \"greedy_logits\": [\n");
  for (size_t i = 0; i < greedy_rows.size(); ++i) {
    write_row(f, greedy_rows[i].data(), n_vocab);
    std::fprintf(f, i + 1 < greedy_rows.size() ? ",\n" : "\n");
  }
  std::fprintf(f, " ]\n}\n");
  std::fclose(f);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
