# Shared by run.sh and test.sh: configure and build one build tree quietly,
# showing the log only when a step fails. Progress goes to stderr, so a
# command's own output (run.sh's generated text) stays clean on stdout.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ENGINE_BUILD_DIR:-$ROOT/build}"
JOBS="${ENGINE_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/engine-ccache}"
# ccache caches compiles that use the test suites' precompiled header only
# with these (its manual, "Precompiled headers").
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"

# The native tree's options, shared by run.sh and test.sh so neither
# reconfigures the other's build.
NATIVE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DENGINE_WERROR=ON)

# The extended test data (../shared by default): ENGINE_SHARED_DIR points
# elsewhere. Without it the tests that need it skip, naming the file.
SHARED_OPTIONS=()
if [ -n "${ENGINE_SHARED_DIR:-}" ]; then SHARED_OPTIONS=("-DENGINE_SHARED_DIR=$ENGINE_SHARED_DIR"); fi

# configure_tree <name> <cmake args...>: configures $BUILD/<name>.
configure_tree() {
  local name=$1; shift
  local log="$BUILD/logs/$name.log"
  mkdir -p "$BUILD/logs"
  if ! cmake -S "$ROOT" -B "$BUILD/$name" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
       -DCMAKE_C_COMPILER_LAUNCHER=ccache "${SHARED_OPTIONS[@]}" "$@" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "configuring $name failed; full log: $log" >&2
    exit 1
  fi
}

# build_tree <name> <cmake args...>: configures $BUILD/<name> and builds it (only
# the targets in $BUILD_TARGETS when set).
build_tree() {
  local name=$1; shift
  local log="$BUILD/logs/$name.log"
  local targets=()
  if [ -n "${BUILD_TARGETS:-}" ]; then targets=(--target $BUILD_TARGETS); fi
  local start=$SECONDS
  configure_tree "$name" "$@"
  if ! cmake --build "$BUILD/$name" -j "$JOBS" "${targets[@]}" >>"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "build of $name failed; full log: $log" >&2
    exit 1
  fi
  echo "built $name${BUILD_TARGETS:+ ($BUILD_TARGETS)} in $((SECONDS - start)) s" >&2
}
