// A C++ app using the installed C++ wrapper (engine/api/engine.hpp): greedy
// text from the prompt given on the command line, with the engine's log routed
// to the app (here: counted).
#include <cstdio>
#include <string>

#include "engine/api/engine.hpp"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int messages = 0;
  try {
    engine::api::set_log_level(ENGINE_LOG_INFO);
    engine::api::set_log_callback([](engine_log_level, const char*, void* user) { ++*static_cast<int*>(user); },
                                  &messages);
    const engine::api::Model model(argv[1]);
    engine_session_params sp = engine_session_default_params();
    sp.n_ctx = 128;
    sp.n_threads = 1;
    engine::api::Session session(model, sp);
    engine_sampler_params samp = engine_sampler_default_params();
    samp.temperature = 0.0f;
    engine::api::Sampler sampler(samp);
    session.prefill(model.tokenize(argv[2], true));
    std::string text = argv[2];
    for (int i = 0; i < 24; ++i) {
      const int32_t t = sampler.sample(session);
      text += model.piece(t);
      session.decode(t);
    }
    engine::api::set_log_callback(nullptr);
    std::printf("%s\n", text.c_str());
  } catch (const engine::api::Error& e) {
    std::fprintf(stderr, "%s: %s\n", engine_status_name(e.status()), e.what());
    return 1;
  }
  // The model's load is logged at info: the callback saw it, stderr did not.
  return messages > 0 ? 0 : 3;
}
