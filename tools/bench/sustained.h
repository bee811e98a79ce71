// Sustained mode's verdict: phones hold their top clocks for seconds, then the
// thermal governor lowers them. Repeating the decode test in rounds shows it;
// a slowdown counts as throttling only when the clocks fell or the heat rose
// with it (otherwise it is reported as a slowdown of unknown cause).
#pragma once

#include "tools/bench/report.h"

namespace bench {

// Thresholds, first third of the rounds against the last third (medians):
inline constexpr double kSlowdown = 0.90;       // tokens/s below 90% of the start
inline constexpr double kClockDrop = 0.90;      // mean clock or policy cap below 90%
inline constexpr double kTempRiseC = 5.0;       // hottest zone up by 5 degrees C or more

// Sets s.verdict ("stable", "throttling", "slowdown"; "not run" without
// rounds) and s.evidence from s.per_round.
void judge_sustained(Sustained& s);

}  // namespace bench
