#include "tools/bench/stats.h"

#include <algorithm>
#include <cmath>

namespace bench {

Stats Stats::of(std::vector<double> samples) {
  Stats s;
  s.samples = std::move(samples);
  s.n = s.samples.size();
  if (s.n == 0) return s;
  std::vector<double> sorted = s.samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = s.n % 2 == 1 ? sorted[s.n / 2] : (sorted[s.n / 2 - 1] + sorted[s.n / 2]) / 2;
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.n - 1));
  }
  return s;
}

}  // namespace bench
