// synth's command line as a library function, so a test writes a model with
// exactly the arguments its reference commands give the synth tool
// (tests/reference/llamacpp/COMMANDS.md).
#pragma once

#include "tools/common/args.h"
#include "tools/common/model_writing/synth_model.h"

namespace tools {

struct SynthCommand {
  enum Action { write, list, help } action = write;
  SynthOptions options;  // with action == write
};

// argv[0] is the program name. Throws ArgError for a bad command line and
// gguf::Error for an unreadable --vocab file.
SynthCommand parse_synth_command(int argc, char** argv);

}  // namespace tools
