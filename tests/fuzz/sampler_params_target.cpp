// The run tool's sampler options on arbitrary arguments, then sampling with
// every parameter set that validates, over logits taken from the input
// (fp16 bit patterns: NaN, Inf, huge and tiny values all occur).
//
// Input: NUL-separated arguments up to an empty one ("\0\0"), then the logits.
#include <string>
#include <vector>

#include "engine/support/error.h"
#include "engine/runtime/sampler.h"
#include "kernels/ref/fp16.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/targets.h"
#include "tools/common/args.h"
#include "tools/common/sampler_args.h"

namespace engine_fuzz {

int sampler_params(const uint8_t* data, size_t size) {
  FuzzInput in({data, size});
  std::vector<std::string> args = {"run"};
  while (!in.empty() && args.size() < 32) {
    const std::string_view a = in.string(64);
    if (a.empty()) break;
    args.emplace_back(a);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  engine::SamplerParams params;
  params.seed = 1;  // 0xFFFFFFFF would draw a random seed: runs must repeat
  try {
    tools::Args parser(static_cast<int>(args.size()), argv.data());
    while (!parser.done()) {
      if (!tools::parse_sampler_option(parser, params)) parser.take();  // not a sampler option
    }
  } catch (const tools::ArgError&) {
    return 0;
  }
  if (params.seed == 0xFFFFFFFFu) params.seed = 2;

  std::vector<float> logits;
  while (in.remaining() >= 2 && logits.size() < 4096) {
    const auto lo = in.byte();
    logits.push_back(kernels::ref::fp16_to_fp32(static_cast<uint16_t>(lo | (in.byte() << 8))));
  }
  if (logits.empty()) logits = {0.5f, -1.0f, 2.0f, 2.0f, -INFINITY, 0.0f};

  try {
    engine::Sampler sampler(params);
    for (int step = 0; step < 4; ++step) {
      const int32_t id = sampler.sample(logits);
      if (id < 0 || static_cast<size_t>(id) >= logits.size()) broken("the sampler gave id " + std::to_string(id));
      sampler.accept(id);
      logits[static_cast<size_t>(id)] -= 1.0f;  // the next draw sees other logits
    }
  } catch (const engine::Error&) {
    // Parameters validate() refuses, or logits with NaN / +Inf / only -Inf.
  }
  return 0;
}

}  // namespace engine_fuzz
