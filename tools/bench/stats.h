// Summary statistics of repeated measurements, as llama-bench reports them
// (mean and sample standard deviation) plus the robust ones a noisy phone
// needs (median, min, max), and the raw samples.
#pragma once

#include <cstddef>
#include <vector>

namespace bench {

struct Stats {
  size_t n = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one sample
  double median = 0;  // the mean of the two middle samples for even n
  double min = 0;
  double max = 0;
  std::vector<double> samples;  // in measurement order

  // All zero (n == 0) for no samples.
  static Stats of(std::vector<double> samples);
  bool empty() const { return n == 0; }
};

}  // namespace bench
