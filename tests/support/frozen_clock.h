// The clock ../shared/chat-templates' expected outputs were made with
// (make_expected.py freezes strftime_now at 2024-07-26 12:00:00), for the
// tests that compare renderings with them.
#pragma once

#include <ctime>

namespace engine_test {

// 2024-07-26 12:00:00, a Friday, day 208 of the year.
inline std::tm frozen_now() {
  std::tm tm{};
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_hour = 12;
  tm.tm_wday = 5;
  tm.tm_yday = 207;
  return tm;
}

}  // namespace engine_test
