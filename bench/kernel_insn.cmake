# kernel_insn (kernel_insn.cpp): one registry kernel on one shape, for counting
# instructions under qemu with ../shared/tools/insncount. Plain C++, so unlike
# the Google Benchmark programs of this folder it is built in every build with
# tools, including the static aarch64 one (bin/kernel_insn).
if(ENGINE_BUILD_TOOLS)
  add_executable(kernel_insn ${CMAKE_CURRENT_LIST_DIR}/kernel_insn.cpp)
  target_link_libraries(kernel_insn PRIVATE engine_lib engine_warnings)
  target_link_options(kernel_insn PRIVATE ${ENGINE_EXE_LINK_OPTIONS})
  set_target_properties(kernel_insn PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endif()
