# Warnings for the project's own targets (not for dependencies).
add_library(engine_warnings INTERFACE)
target_compile_options(engine_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wformat=2 -Wimplicit-fallthrough>
  $<$<AND:$<BOOL:${ENGINE_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>>:-Werror>)
