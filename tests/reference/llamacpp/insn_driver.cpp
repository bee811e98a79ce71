// insn_driver: the work `run --temp 0 -t 1` does, on llama.cpp, for counting
// instructions under qemu-aarch64 side by side (README, "Figures"): one
// thread, the prompt's token ids in one llama_decode with logits for the last
// position only, then greedy decoding one token per call. Written against
// llama.h; built against an aarch64 llama.cpp beside the project, never in it.
//
//   insn_driver MODEL.gguf N_PROMPT N_PREDICT
//
// The prompt is BOS (id 1) followed by N_PROMPT - 1 copies of id 123 (synth's
// byte token for 'x'), the tokens `run -p xxx...` gives a synth model.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: insn_driver MODEL.gguf N_PROMPT N_PREDICT\n");
    return 2;
  }
  const int n_prompt = std::atoi(argv[2]), n_predict = std::atoi(argv[3]);
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (model == nullptr) return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(n_prompt + n_predict + 8);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n_prompt);
  cp.n_threads = cp.n_threads_batch = 1;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) return 1;
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  std::vector<llama_token> prompt(n_prompt, 123);
  prompt[0] = 1;
  llama_batch batch = llama_batch_get_one(prompt.data(), n_prompt);
  llama_token next = 0;
  for (int i = 0; i < n_predict; ++i) {
    if (llama_decode(ctx, batch) != 0) return 1;
    const float* logits = llama_get_logits_ith(ctx, -1);
    next = 0;
    for (int j = 1; j < n_vocab; ++j) {
      if (logits[j] > logits[next]) next = j;
    }
    batch = llama_batch_get_one(&next, 1);
  }
  std::printf("last token %d\n", next);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
