# Shared by run.sh and test.sh: configure and build one build tree quietly,
# showing the log only when a step fails.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ENGINE_BUILD_DIR:-$ROOT/build}"
JOBS="${ENGINE_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/engine-ccache}"

# The native tree's options, shared by run.sh and test.sh so neither
# reconfigures the other's build.
NATIVE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DENGINE_WERROR=ON)

# build_tree <name> <cmake args...>: configures $BUILD/<name> and builds it (only
# the targets in $BUILD_TARGETS when set).
build_tree() {
  local name=$1; shift
  local dir="$BUILD/$name" log="$BUILD/logs/$name.log"
  local targets=()
  if [ -n "${BUILD_TARGETS:-}" ]; then targets=(--target $BUILD_TARGETS); fi
  mkdir -p "$BUILD/logs"
  local start=$SECONDS
  if ! { cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
           -DCMAKE_C_COMPILER_LAUNCHER=ccache "$@" && cmake --build "$dir" -j "$JOBS" "${targets[@]}"; } >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "build of $name failed; full log: $log" >&2
    exit 1
  fi
  echo "built $name in $((SECONDS - start)) s"
}
