# Shared by run.sh and test.sh: configure and build one build tree quietly,
# showing the log only when a step fails.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ENGINE_BUILD_DIR:-$ROOT/build}"
JOBS="${ENGINE_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/engine-ccache}"

# build_tree <name> <cmake args...>: configures $BUILD/<name> and builds it.
build_tree() {
  local name=$1; shift
  local dir="$BUILD/$name" log="$BUILD/logs/$name.log"
  mkdir -p "$BUILD/logs"
  local start=$SECONDS
  if ! { cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
           -DCMAKE_C_COMPILER_LAUNCHER=ccache "$@" && cmake --build "$dir" -j "$JOBS"; } >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "build of $name failed; full log: $log" >&2
    exit 1
  fi
  echo "built $name in $((SECONDS - start)) s"
}
