#include "engine/chat_template/chat_template.h"

#include "engine/chat_template/evaluator.h"
#include "engine/chat_template/lexer.h"
#include "engine/chat_template/parser.h"

namespace engine::chat_template {

struct Template::Impl {
  Options options;
  Body body;
};

Template::Template(std::string_view source, const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->body = parse(tokenize(source), options.limits.max_depth);
}

Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Value& variables) const { return evaluate(impl_->body, variables, impl_->options); }

Value conversation_variables(const Value& conversation) {
  if (!conversation.is_dict()) throw ValueError("the conversation must be a JSON object");
  const ValueDict& c = conversation.dict();
  const Value* messages = c.find("messages");
  if (!messages || !messages->is_list()) throw ValueError("the conversation needs a \"messages\" array");
  auto vars = std::make_shared<ValueDict>();
  // As make_expected.py (and transformers) build the context: extra first,
  // then the named variables over it.
  if (const Value* extra = c.find("extra"); extra && extra->is_dict())
    for (const auto& [k, v] : extra->dict().entries) vars->set_key(k, v);
  vars->set("messages", *messages);
  const Value* agp = c.find("add_generation_prompt");
  vars->set("add_generation_prompt", agp ? *agp : Value(false));
  const Value* bos = c.find("bos_token");
  vars->set("bos_token", bos ? *bos : Value(""));
  const Value* eos = c.find("eos_token");
  vars->set("eos_token", eos ? *eos : Value(""));
  if (const Value* tools = c.find("tools")) vars->set("tools", *tools);
  return Value(std::move(vars));
}

}  // namespace engine::chat_template
