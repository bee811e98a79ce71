# ENGINE_SANITIZE="address;undefined" or "thread": applied to every target of the
# project so the library, the tests and the tools are all instrumented.
if(ENGINE_SANITIZE)
  list(JOIN ENGINE_SANITIZE "," _engine_san)
  add_compile_options(-fsanitize=${_engine_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_engine_san})
  if(ENGINE_STATIC_TOOLS)
    message(FATAL_ERROR "ENGINE_SANITIZE cannot be combined with ENGINE_STATIC_TOOLS")
  endif()
endif()

# ENGINE_FUZZ: every target gets libFuzzer's coverage instrumentation, so the
# fuzzers see the engine's branches; only the fuzz binaries link libFuzzer
# itself (tests/fuzz/CMakeLists.txt).
if(ENGINE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ENGINE_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
