#include "tools/bench/sustained.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tools/common/plural.h"

namespace bench {
namespace {

// Median of a field over rounds [begin, end), skipping unknown values.
double median_of(const std::vector<Round>& rounds, size_t begin, size_t end, double Round::*field) {
  std::vector<double> v;
  for (size_t i = begin; i < end; ++i) {
    if (known(rounds[i].*field)) v.push_back(rounds[i].*field);
  }
  if (v.empty()) return kUnknown;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

void judge_sustained(Sustained& s) {
  const std::vector<Round>& r = s.per_round;
  if (r.empty()) {
    s.verdict = "not run";
    s.evidence.clear();
    return;
  }
  if (r.size() < 2) {
    s.verdict = "stable";
    s.evidence = "one round: nothing to compare";
    return;
  }
  const size_t third = std::max<size_t>(1, r.size() / 3);
  const size_t late = r.size() - third;
  const double tps0 = median_of(r, 0, third, &Round::tokens_per_s);
  const double tps1 = median_of(r, late, r.size(), &Round::tokens_per_s);
  const double f0 = median_of(r, 0, third, &Round::mean_freq_mhz);
  const double f1 = median_of(r, late, r.size(), &Round::mean_freq_mhz);
  const double cap0 = median_of(r, 0, third, &Round::mean_policy_max_mhz);
  const double cap1 = median_of(r, late, r.size(), &Round::mean_policy_max_mhz);
  const double t0 = median_of(r, 0, third, &Round::max_temp_c);
  const double t1 = median_of(r, late, r.size(), &Round::max_temp_c);

  char buf[512];
  std::string ev;
  std::snprintf(buf, sizeof buf, "decode %.2f -> %.2f tokens/s (%+.0f%%), first %zu vs last %zu of %s", tps0, tps1,
                known(tps0) && tps0 > 0 ? 100.0 * (tps1 / tps0 - 1) : 0.0, third, third,
                tools::plural(static_cast<int64_t>(r.size()), "round").c_str());
  ev = buf;
  const bool slower = known(tps0) && known(tps1) && tps1 < kSlowdown * tps0;
  const bool clock_drop = (known(f0) && known(f1) && f1 < kClockDrop * f0) ||
                          (known(cap0) && known(cap1) && cap1 < kClockDrop * cap0);
  const bool hotter = known(t0) && known(t1) && t1 - t0 >= kTempRiseC;
  if (known(f0) && known(f1)) {
    std::snprintf(buf, sizeof buf, "; clock %.0f -> %.0f MHz", f0, f1);
    ev += buf;
  }
  if (known(cap0) && known(cap1) && cap1 != cap0) {
    std::snprintf(buf, sizeof buf, "; clock cap %.0f -> %.0f MHz", cap0, cap1);
    ev += buf;
  }
  if (known(t0) && known(t1)) {
    std::snprintf(buf, sizeof buf, "; hottest zone %.1f -> %.1f C", t0, t1);
    ev += buf;
  }
  if (slower && (clock_drop || hotter)) {
    s.verdict = "throttling";
  } else if (slower) {
    s.verdict = "slowdown";
    ev += known(f0) || known(t0) ? "; clocks and temperatures did not move: not thermal (background load?)"
                                 : "; clocks and temperatures are not readable here";
  } else {
    s.verdict = "stable";
  }
  s.evidence = ev;
}

}  // namespace bench
