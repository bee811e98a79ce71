#!/usr/bin/env bash
# Installs what the build and the tests need on Debian/Ubuntu: compilers (GCC,
# and clang with its libFuzzer runtime), CMake, Ninja, ccache, qemu-user, the
# aarch64 cross compiler, the arm64 multiarch -dev packages, and what the
# Python and Java bindings build and test with. Idempotent:
# prints nothing and changes nothing when all is there.
set -euo pipefail

native_packages=(cmake ninja-build g++ ccache qemu-user g++-aarch64-linux-gnu
                 libhwy-dev libxsimd-dev libgtest-dev libbenchmark-dev
                 clang-14 libclang-rt-14-dev  # clang and libFuzzer for the fuzz tree
                 pybind11-dev python3-dev python3-numpy python3-pytest  # the Python binding and its tests
                 default-jdk-headless junit5  # the Java binding (JNI headers, javac) and its JUnit tests
                 tmux)  # the chat tool's tests on a terminal
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
[ "$need_arch" = 0 ] && [ "${#missing[@]}" = 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
if [ "$need_arch" = 1 ]; then "${as_root[@]}" dpkg --add-architecture arm64; fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
