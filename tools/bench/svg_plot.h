// --plot FILE.svg: the sustained rounds as one chart of three stacked panels
// sharing the round axis (tokens/s, hottest thermal zone, mean worker clock),
// so throttling shows as the three curves bending together. Plain SVG 1.1,
// written by hand: no plotting dependency on the phone.
#pragma once

#include <string>

#include "tools/bench/report.h"

namespace bench {

std::string sustained_svg(const Sustained& s, const std::string& title);

// XML text escaping (&, <, >, ").
std::string xml_escape(const std::string& s);

}  // namespace bench
