# `cmake --install` puts libengine.a, libengine.so, the public headers and a CMake
# package in the prefix, so an app can `find_package(engine)` and link
# engine::engine (shared) or engine::engine_static.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS engine_shared engine_static EXPORT engineTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/engine)
foreach(_dir gguf kernels engine)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/engine/${_dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")  # engine/api/engine.hpp: the C++ wrapper
endforeach()
if(ENGINE_BUILD_TOOLS)
  install(TARGETS ${ENGINE_TOOL_TARGETS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT engineTargets NAMESPACE engine:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/engine)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/engineConfig.cmake.in
  ${PROJECT_BINARY_DIR}/engineConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/engine)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/engineConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/engineConfig.cmake ${PROJECT_BINARY_DIR}/engineConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/engine)
