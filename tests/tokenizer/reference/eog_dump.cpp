// eog_dump VOCAB.gguf: the ids llama.cpp's llama_vocab_is_eog() is true for,
// on one line. Ours, written against llama.cpp's public llama.h (built by
// make_family_expected.py; never part of the project's build).
#include <cstdio>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: eog_dump VOCAB.gguf\n");
    return 2;
  }
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model_params params = llama_model_default_params();
  params.vocab_only = true;
  llama_model* model = llama_model_load_from_file(argv[1], params);
  if (model == nullptr) {
    std::fprintf(stderr, "eog_dump: cannot load %s\n", argv[1]);
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const char* sep = "";
  for (llama_token id = 0; id < llama_vocab_n_tokens(vocab); ++id) {
    if (llama_vocab_is_eog(vocab, id)) {
      std::printf("%s%d", sep, id);
      sep = " ";
    }
  }
  std::printf("\n");
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
