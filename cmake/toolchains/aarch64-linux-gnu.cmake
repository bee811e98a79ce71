# Cross build for 64-bit ARM Linux with Debian's aarch64-linux-gnu-g++ and the
# arm64 multiarch -dev packages (dpkg --add-architecture arm64; scripts/setup.sh).
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# The binaries run on an ARM board or phone, or here under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Programs come from the build machine; libraries, headers and CMake packages
# from the arm64 multiarch paths (/usr/lib/aarch64-linux-gnu, /usr/include).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(ENGINE_QEMU_AARCH64 qemu-aarch64)
if(ENGINE_QEMU_AARCH64)
  # Lets try_run and ctest launch aarch64 programs on an x86 build machine.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ENGINE_QEMU_AARCH64})
endif()
