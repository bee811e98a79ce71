#!/usr/bin/env bash
# Installs what the build and the tests need on Debian/Ubuntu: compilers (GCC,
# and clang with its libFuzzer runtime), CMake, Ninja, ccache, qemu-user, the
# aarch64 cross compiler, llvm-19 (llvm-mca), the arm64 multiarch -dev packages, what the
# Python and Java bindings build and test with, and what serve's real-client
# tests run (Chromium, Node and npm, and the npm packages pinned by
# tests/serve/client/package-lock.json, kept outside the repository in
# ${XDG_CACHE_HOME:-$HOME/.cache}/engine-node). Idempotent:
# prints nothing and changes nothing when all is there.
set -euo pipefail

native_packages=(cmake ninja-build g++ ccache qemu-user g++-aarch64-linux-gnu
                 libhwy-dev libxsimd-dev libgtest-dev libbenchmark-dev
                 clang-14 libclang-rt-14-dev  # clang and libFuzzer for the fuzz tree
                 pybind11-dev python3-dev python3-numpy python3-pytest  # the Python binding and its tests
                 default-jdk-headless junit5  # the Java binding (JNI headers, javac) and its JUnit tests
                 tmux  # the chat tool's tests on a terminal
                 llvm-19  # llvm-mc and llvm-mca: the ARM kernels' cycle table (bench/cycles)
                 libcpp-httplib-dev nlohmann-json3-dev curl  # serve (HTTP and JSON) and its curl test
                 chromium)  # serve's chat page, driven headless by tests/serve/client
arm64_packages=(libhwy-dev:arm64 libxsimd-dev:arm64 libgtest-dev:arm64 libbenchmark-dev:arm64)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if ! command -v dpkg-query >/dev/null; then
  echo "setup: not a Debian-based system; install by hand: ${native_packages[*]} and the arm64 packages" >&2
  echo "       (or configure with -DENGINE_FETCH_DEPS=ON to download the libraries)" >&2
  exit 1
fi

as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo); fi

need_arch=0
dpkg --print-foreign-architectures | grep -qx arm64 || need_arch=1
missing=()
for p in "${native_packages[@]}" "${arm64_packages[@]}"; do
  installed "$p" || missing+=("$p")
done
# Node may come from elsewhere (NodeSource, nvm): take Debian's only when there is no npm.
command -v npm >/dev/null || missing+=(nodejs npm)

if [ "$need_arch" = 1 ] || [ "${#missing[@]}" != 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$need_arch" = 1 ]; then "${as_root[@]}" dpkg --add-architecture arm64; fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq >/dev/null
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done" >&2
fi

# The npm packages of serve's client tests (the openai client, puppeteer-core), installed
# from the lock into a cache outside the repository, so the tree stays clean and a second
# checkout shares them. --ignore-scripts: puppeteer-core downloads nothing, and no package
# gets to run code at install time; the tests drive Debian's /usr/bin/chromium.
client_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/serve/client"
node_cache="${XDG_CACHE_HOME:-$HOME/.cache}/engine-node"
if ! cmp -s "$client_dir/package-lock.json" "$node_cache/package-lock.json" ||
   [ ! -d "$node_cache/node_modules" ]; then
  echo "setup: installing the npm packages of tests/serve/client into $node_cache" >&2
  mkdir -p "$node_cache"
  cp "$client_dir/package.json" "$client_dir/package-lock.json" "$node_cache/"
  # A failed install leaves no lock behind, so the next run tries again; the client tests
  # then skip (exit 77, naming the missing modules) instead of failing the whole setup.
  if (cd "$node_cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "setup: done" >&2
  else
    rm -f "$node_cache/package-lock.json"
    echo "setup: npm ci failed in $node_cache; serve's client tests will skip" >&2
  fi
fi
