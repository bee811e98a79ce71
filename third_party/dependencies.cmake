# How each dependency is found. First choice: the installed package (Debian:
# libhwy-dev, libxsimd-dev, libgtest-dev, libbenchmark-dev, and their :arm64
# versions for the cross build; scripts/setup.sh installs them). Fallback, for
# machines with internet and no packages (an Android NDK build on a laptop):
# -DENGINE_FETCH_DEPS=ON downloads the pinned versions below with FetchContent.
# No third-party source lives in this repository.
include(FetchContent)

# Pinned to the versions Debian 12 ships, so both paths build the same code.
set(ENGINE_HWY_TAG 1.0.3)
set(ENGINE_XSIMD_TAG 8.1.0)
set(ENGINE_GTEST_TAG release-1.12.1)
set(ENGINE_BENCHMARK_TAG v1.7.1)

find_package(Threads REQUIRED)

# engine_find(<package> <target> <git repo> <tag> [cache settings...])
# Finds <package>; if it is missing and ENGINE_FETCH_DEPS is on, fetches it.
# Sets ENGINE_HAVE_<package>. Included from the top-level CMakeLists.txt so the
# imported targets are visible to every folder.
macro(engine_find package target repo tag)
  find_package(${package} QUIET)
  if(NOT TARGET ${target} AND ENGINE_FETCH_DEPS)
    message(STATUS "third_party: fetching ${package} ${tag} from ${repo}")
    foreach(_setting ${ARGN})
      string(REPLACE "=" ";" _kv "${_setting}")
      list(GET _kv 0 _k)
      list(GET _kv 1 _v)
      set(${_k} ${_v} CACHE INTERNAL "")
    endforeach()
    FetchContent_Declare(${package} GIT_REPOSITORY ${repo} GIT_TAG ${tag} GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(${package})
  endif()
  if(TARGET ${target})
    set(ENGINE_HAVE_${package} ON)
    message(STATUS "third_party: ${package} found (${target})")
  else()
    set(ENGINE_HAVE_${package} OFF)
  endif()
endmacro()

# xsimd: elementwise math in engine/ (header-only).
engine_find(xsimd xsimd https://github.com/xtensor-stack/xsimd.git ${ENGINE_XSIMD_TAG})
if(NOT TARGET xsimd)
  message(FATAL_ERROR "xsimd not found: run scripts/setup.sh (Debian: libxsimd-dev) "
                      "or configure with -DENGINE_FETCH_DEPS=ON")
endif()

if(ENGINE_USE_HWY)
  engine_find(hwy hwy::hwy https://github.com/google/highway.git ${ENGINE_HWY_TAG}
              HWY_ENABLE_TESTS=OFF HWY_ENABLE_EXAMPLES=OFF HWY_ENABLE_CONTRIB=OFF HWY_ENABLE_INSTALL=OFF)
  if(NOT TARGET hwy::hwy AND TARGET hwy)
    add_library(hwy::hwy ALIAS hwy)
  endif()
  if(NOT TARGET hwy::hwy)
    message(FATAL_ERROR "Highway not found: run scripts/setup.sh (Debian: libhwy-dev), "
                        "configure with -DENGINE_FETCH_DEPS=ON, or turn it off with -DENGINE_USE_HWY=OFF")
  endif()
endif()

if(ENGINE_BUILD_TESTS)
  set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
  engine_find(GTest GTest::gtest https://github.com/google/googletest.git ${ENGINE_GTEST_TAG}
              INSTALL_GTEST=OFF)
  if(NOT TARGET GTest::gtest AND TARGET gtest)
    add_library(GTest::gtest ALIAS gtest)
  endif()
  if(NOT TARGET GTest::gtest)
    message(FATAL_ERROR "GoogleTest not found: run scripts/setup.sh (Debian: libgtest-dev), "
                        "configure with -DENGINE_FETCH_DEPS=ON, or -DENGINE_BUILD_TESTS=OFF")
  endif()
endif()

if(ENGINE_BUILD_BENCH)
  engine_find(benchmark benchmark::benchmark https://github.com/google/benchmark.git ${ENGINE_BENCHMARK_TAG}
              BENCHMARK_ENABLE_TESTING=OFF BENCHMARK_ENABLE_INSTALL=OFF BENCHMARK_ENABLE_GTEST_TESTS=OFF)
  if(NOT TARGET benchmark::benchmark)
    message(STATUS "third_party: Google Benchmark not found; bench/ is not built")
  endif()
endif()
