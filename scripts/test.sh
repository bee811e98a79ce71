#!/usr/bin/env bash
# Sets up and builds everything, then runs every test through one ctest run:
#   native  - the suite on this machine (Release, warnings as errors)
#   asan    - the native suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan    - the threading suites under ThreadSanitizer
#   aarch64 - cross-compiled, static, run under qemu-aarch64 with -cpu cortex-a53
#             (NEON), neoverse-n1 (dotprod), max (i8mm, SVE2 at 128 bits, as
#             phones have it) and a64fx (SVE 512); the kernel suites also with
#             SVE at 256 bits
#   fuzz    - clang libFuzzer targets under ASan+UBSan (tests/fuzz), each run for
#             a bounded time (ENGINE_FUZZ_SECONDS, default 20) from fresh seeds
# The output ends with ctest's summary line.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$ROOT/scripts/setup.sh"

# -cpu max with SVE at 128 bits, the width of every phone with SVE (qemu's
# default for max is 512, which a64fx covers, and emulated wide SVE is slow:
# model_reference_test took 325 s on max at 512 bits). The kernel suites also
# run with SVE at 256 bits, and with SME at 512 bits (qemu's default is 256;
# the sme kernels' tiles follow the streaming vector length).
QEMU_CPUS="cortex-a53;neoverse-n1;max=max,sve-default-vector-length=16;a64fx"
QEMU_KERNEL_CPUS="max-sve256=max,sve-default-vector-length=32;max-sme512=max,sve-default-vector-length=16,sme-default-vector-length=64"
# The sanitizer and fuzz trees keep line tables only (-g1): enough for the
# reports' stack traces, and a lighter compile than full debug information.
# The ASan+UBSan tree is also -O1 (what ASan's documentation suggests): its
# compile was half of the whole script's, and a test file took 7.1 s at -O1
# against 11.6 s at -O2; its tests run in under a minute either way.
SAN_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
ASAN_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
# The five trees: name, the targets to build ("" for all), cmake options.
TREES=(native asan tsan aarch64 fuzz)
native_targets=""; native_options=("${NATIVE_OPTIONS[@]}")
asan_targets=""; asan_options=("${ASAN_FLAGS[@]}" -DENGINE_WERROR=ON -DENGINE_BUILD_BENCH=OFF
  "-DENGINE_SANITIZE=address;undefined" -DENGINE_TEST_SUFFIX=@asan)
# ThreadSanitizer over the threading suites and the C API's (sessions from
# several threads, the log callback swapped while threads log, a prefill
# stopped from another thread) and the Python binding's (chats on one model
# from several Python threads); the rest gains nothing from it.
tsan_targets="threads_topology_test threads_pool_test threads_matmul_test c_api_test c_api_misuse_test c_api_log_test c_api_caller_test c_api_session_test c_api_session_file_test c_api_chat_test c_api_grammar_test c_api_abort_test c_api_load_test engine_python"
tsan_options=("${SAN_FLAGS[@]}" -DENGINE_WERROR=ON -DENGINE_BUILD_BENCH=OFF
  -DENGINE_BUILD_TOOLS=OFF -DENGINE_SANITIZE=thread -DENGINE_TEST_SUFFIX=@tsan)
aarch64_targets=""; aarch64_options=(-DCMAKE_BUILD_TYPE=Release -DENGINE_WERROR=ON
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake"
  -DENGINE_STATIC_TOOLS=ON -DENGINE_BUILD_BENCH=OFF "-DENGINE_QEMU_CPUS=$QEMU_CPUS" "-DENGINE_QEMU_KERNEL_CPUS=$QEMU_KERNEL_CPUS")
# The fuzz targets: clang, libFuzzer, ASan+UBSan. Only the fuzz binaries are
# built (and no Highway tier: the fuzzers exercise parsing, loading and the
# reference kernels), which keeps this tree to a few minutes of compiling.
fuzz_targets="fuzz_seeds fuzz_gguf_reader fuzz_model_loader fuzz_tokenizer_spm fuzz_tokenizer_bpe fuzz_sampler_params fuzz_chat_template fuzz_session_file fuzz_grammar fuzz_serve_request"
fuzz_options=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${SAN_FLAGS[@]}"
  -DENGINE_WERROR=ON -DENGINE_BUILD_BENCH=OFF -DENGINE_USE_HWY=OFF -DENGINE_FUZZ=ON
  "-DENGINE_SANITIZE=address;undefined" -DENGINE_TEST_SUFFIX=@fuzz)
# Where each tree's tests are (folders separated by spaces), for the one ctest run below.
native_tests=native; asan_tests=asan; tsan_tests="tsan/tests/threads tsan/tests/api tsan/tests/python"; aarch64_tests=aarch64; fuzz_tests=fuzz/tests/fuzz

options_of() { local -n opts="$1_options"; printf '%s\0' "${opts[@]}"; }

# With a test filter (-R, -E, -L, -LE, -I and their long forms), only the
# trees that have a matching test are built, and in them only the programs the
# matching tests run (the whole tree when a test names none): `scripts/test.sh
# -R tokenizer` builds the tokenizer suites, not five trees.
filtered=0
for arg in "$@"; do
  case "$arg" in -R|-E|-L|-LE|-I|--tests-regex*|--exclude-regex*|--label-regex*|--label-exclude*|--tests-information*) filtered=1 ;; esac
done

for tree in "${TREES[@]}"; do
  mapfile -d '' opts < <(options_of "$tree")
  targets_var="${tree}_targets"; tests_var="${tree}_tests"
  targets="${!targets_var}"
  if [ "$filtered" = 1 ]; then
    configure_tree "$tree" "${opts[@]}"
    # The programs the matching tests name: test commands hold their paths.
    listing=$(for dir in ${!tests_var}; do ctest --test-dir "$BUILD/$dir" -N --show-only=json-v1 "$@" 2>/dev/null; done || true)
    [ "$(printf '%s' "$listing" | grep -c '"name"')" -gt 0 ] || { echo "no test of $tree matches; not built" >&2; continue; }
    known=$(ninja -C "$BUILD/$tree" -t targets all 2>/dev/null | sed -n 's/^\([A-Za-z0-9_.+-]*\): phony$/\1/p' | sort -u)
    used=$(printf '%s' "$listing" | grep -o "$BUILD/$tree/[^\"@ ;]*" | sort -u |
           while read -r path; do [ -d "$path" ] || basename "$path"; done | sort -u)
    targets=$(comm -12 <(printf '%s\n' "$known") <(printf '%s\n' "$used") | tr '\n' ' ')
    targets="${targets% }"
    # A test whose command names no program of this tree builds the whole
    # tree: in a tree not built yet ctest lists a suite with no command at all,
    # and the Python binding's test runs python3 on a module the tree builds.
    if printf '%s' "$listing" | tree_dir="$BUILD/$tree/" python3 -c '
import json, os, sys
text, decoder, at = sys.stdin.read(), json.JSONDecoder(), 0
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at == len(text):
        sys.exit(1)
    doc, at = decoder.raw_decode(text, at)
    for test in doc.get("tests", []):
        if not any(a.startswith(os.environ["tree_dir"]) for a in test.get("command", [])):
            sys.exit(0)'; then
      targets=""
    fi
  fi
  BUILD_TARGETS="$targets" build_tree "$tree" "${opts[@]}"
done

# One ctest run over the trees.
cat >"$BUILD/CTestTestfile.cmake" <<CTEST
# Generated by scripts/test.sh: runs the native, asan, tsan, aarch64 and fuzz suites together.
$(for tree in "${TREES[@]}"; do
  tests_var="${tree}_tests"
  for dir in ${!tests_var}; do [ -d "$BUILD/$dir" ] && echo "subdirs(\"$dir\")"; done
done)
CTEST

# What each qemu CPU model is detected as, and the kernels it gets.
model="${ENGINE_SHARED_DIR:-$ROOT/../shared}/models/reference/llama-d256-Q4_K_M.gguf"
if [ -f "$model" ] && [ -x "$BUILD/aarch64/bin/gguf-info" ] && [ "$filtered" = 0 ]; then
  for entry in ${QEMU_CPUS//;/ }; do
    cpu=${entry#*=}  # "label=cpu options" or a plain cpu
    echo "== qemu-aarch64 -cpu $cpu"
    ENGINE_LOG_LEVEL=info qemu-aarch64 -cpu "$cpu" "$BUILD/aarch64/bin/gguf-info" --kernels "$model" | sed -n '/^kernels/,$p'
  done
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
# Models that tests write with synth and share between trees and qemu CPU
# models (llamacpp_reference_test), emptied so each run checks synth afresh.
export ENGINE_TEST_MODEL_CACHE="$BUILD/test-models"
rm -rf "$ENGINE_TEST_MODEL_CACHE"
cd "$BUILD" && exec ctest -j "$JOBS" --output-on-failure "$@"
