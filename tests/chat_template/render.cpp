#include "tests/chat_template/render.h"

#include "engine/chat_template/json.h"

namespace chat_template_test {

std::string render(const std::string& source, const std::string& variables_json, const ct::Options& options) {
  return ct::Template(source, options).render(ct::parse_json(variables_json));
}

std::optional<ct::Error> render_error(const std::string& source, const std::string& variables_json,
                                      const ct::Options& options) {
  try {
    render(source, variables_json, options);
  } catch (const ct::Error& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace chat_template_test
