// A complete report built from a fixture tree and made-up but plausible
// measurements (a Pixel 8 Pro running a TinyLlama-shaped Q4_0 file): the base
// of the schema test, the checked-in example and every diagnosis pair.
#pragma once

#include <string>

#include "tools/bench/report.h"

namespace bench_test {

// Fixture roots (tests/fixtures/bench/<name>, tests/fixtures/topology/<name>).
std::string bench_fixture(const std::string& name);
std::string topology_fixture(const std::string& name);

// Environment from tests/fixtures/bench/pixel-8-pro; one run with pp512,
// ttft512, tg128, the probe, the roofline and six stable sustained rounds.
bench::Report example_report();

}  // namespace bench_test
