/* A C program using the installed engine through its C API: greedy text from
 * the prompt given on the command line. */
#include <stdio.h>
#include <string.h>

#include "engine/api/engine.h"

static int check(engine_status s, const char* what) {
  if (s != ENGINE_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, engine_status_name(s), engine_last_error());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  engine_model* model = NULL;
  if (check(engine_model_load(argv[1], &model), "load")) return 1;
  engine_session_params sp = engine_session_default_params();
  sp.n_ctx = 128;
  sp.n_threads = 1;
  engine_session* session = NULL;
  if (check(engine_session_create(model, &sp, &session), "session")) return 1;
  engine_sampler_params samp = engine_sampler_default_params();
  samp.temperature = 0.0f;
  engine_sampler* sampler = NULL;
  if (check(engine_sampler_create(&samp, &sampler), "sampler")) return 1;

  int32_t tokens[256];
  size_t n = 0;
  if (check(engine_tokenize(model, argv[2], strlen(argv[2]), true, false, tokens, 256, &n), "tokenize")) return 1;
  if (check(engine_prefill(session, tokens, n), "prefill")) return 1;
  fputs(argv[2], stdout);
  for (int i = 0; i < 24; ++i) {
    int32_t t = 0;
    if (check(engine_sample(sampler, session, &t), "sample")) return 1;
    char piece[64];
    size_t len = 0;
    if (check(engine_token_to_piece(model, t, piece, sizeof piece, &len), "piece")) return 1;
    fwrite(piece, 1, len, stdout);
    if (check(engine_decode(session, t), "decode")) return 1;
  }
  fputs("\n", stdout);
  engine_sampler_free(sampler);
  engine_session_free(session);
  return check(engine_model_free(model), "free") ;
}
