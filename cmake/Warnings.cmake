# Warnings for the project's own targets (not for dependencies).
add_library(engine_warnings INTERFACE)
target_compile_options(engine_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wformat=2 -Wimplicit-fallthrough>
  $<$<AND:$<BOOL:${ENGINE_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>>:-Werror>)
# GCC 12 reports a false -Wrestrict inside libstdc++ for "literal" + std::string
# temporaries (GCC PR 105651, fixed in 13), so the warning is off on GCC < 13.
target_compile_options(engine_warnings INTERFACE
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
