// The C API's structured output (engine.h, "structured output"): a grammar
// parsed into a TokenConstraint over the model's vocabulary and set on a
// claimed sampler.
#include <memory>
#include <string>

#include "engine/api/c_api_objects.h"
#include "engine/api/engine.h"
#include "engine/chat/tool_calls.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/token_constraint.h"

using namespace engine::api_detail;  // NOLINT: the objects and steps of c_api_objects.h

namespace {

// Sets the grammar `make(model)` gives (nullptr text: removes the grammar).
template <class Make>
engine_status set_grammar(const char* what, engine_sampler* sampler_handle, const engine_model* m, const char* text,
                          Make&& make) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), what, "sampler");
  if (text == nullptr) {
    sampler->sampler->set_grammar(nullptr);
    return ENGINE_OK;
  }
  const ModelClaim model(m);
  if (model.status() != Status::ok) return refused(model.status(), what, "model");
  return guarded(what, [&] {
    sampler->sampler->set_grammar(
        std::make_unique<engine::grammar::TokenConstraint>(make(*model), model->grammar_vocabulary()));
    return ENGINE_OK;
  });
}

}  // namespace

extern "C" {

engine_status engine_sampler_set_grammar(engine_sampler* sampler, const engine_model* model, const char* gbnf,
                                         const char* root) {
  return set_grammar("engine_sampler_set_grammar", sampler, model, gbnf,
                     [&](const ModelObject&) {
                       return engine::grammar::parse_gbnf(gbnf, root != nullptr ? root : "root");
                     });
}

engine_status engine_sampler_set_json_schema(engine_sampler* sampler, const engine_model* model, const char* schema) {
  return set_grammar("engine_sampler_set_json_schema", sampler, model, schema,
                     [&](const ModelObject&) {
                       return engine::grammar::parse_gbnf(engine::grammar::json_schema_to_gbnf(schema));
                     });
}

engine_status engine_sampler_set_tool_grammar(engine_sampler* sampler, const engine_model* model, const char* tools,
                                              const char* format) {
  return set_grammar("engine_sampler_set_tool_grammar", sampler, model, tools, [&](const ModelObject& m) {
    return engine::grammar::parse_gbnf(engine::chat::tool_call_gbnf(tools, model_tool_call_format(m, format)));
  });
}

engine_status engine_sampler_reset_grammar(engine_sampler* sampler_handle) {
  SamplerClaim sampler(sampler_handle);
  if (sampler.status() != Status::ok) return refused(sampler.status(), "engine_sampler_reset_grammar", "sampler");
  if (engine::grammar::TokenConstraint* g = sampler->sampler->grammar()) g->reset();
  return ENGINE_OK;
}

}  // extern "C"
