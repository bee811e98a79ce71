// The C API's structured output (engine.h, "structured output"): a grammar
// parsed into a TokenConstraint over the model's vocabulary and set on a
// claimed sampler.
#include <memory>
#include <string>

#include "engine/api/c_api_objects.h"
#include "engine/api/engine.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/token_constraint.h"

using namespace engine::api_detail;  // NOLINT: the objects and steps of c_api_objects.h

extern "C" {

engine_status engine_sampler_set_grammar(engine_sampler* sampler_handle, const engine_model* m, const char* gbnf,
                                         const char* root) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_sampler_set_grammar", "sampler");
  if (gbnf == nullptr) {
    sampler->sampler->set_grammar(nullptr);
    return ENGINE_OK;
  }
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), "engine_sampler_set_grammar", "model");
  return guarded("engine_sampler_set_grammar", [&] {
    engine::grammar::Grammar g = engine::grammar::parse_gbnf(gbnf, root != nullptr ? root : "root");
    sampler->sampler->set_grammar(
        std::make_unique<engine::grammar::TokenConstraint>(std::move(g), model->grammar_vocabulary()));
    return ENGINE_OK;
  });
}

engine_status engine_sampler_reset_grammar(engine_sampler* sampler_handle) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_sampler_reset_grammar", "sampler");
  if (engine::grammar::TokenConstraint* g = sampler->sampler->grammar()) g->reset();
  return ENGINE_OK;
}

}  // extern "C"
