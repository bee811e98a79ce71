// A count with its noun, singular or plural as the count needs: "1 token",
// "2 tokens", "0 tokens", "1 repetition". Every count a tool prints goes
// through it, so no output says "1 tokens".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tools {

// `plural_form` when the noun does not just take an "s" ("1 pass", "2 passes").
inline std::string plural(int64_t n, std::string_view singular, std::string_view plural_form = {}) {
  std::string text = std::to_string(n) + " ";
  if (n == 1) return text.append(singular);
  return plural_form.empty() ? text.append(singular).append("s") : text.append(plural_form);
}

}  // namespace tools
