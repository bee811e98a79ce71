# Installs the build into a scratch prefix, builds the consumer apps against it
# with find_package(engine) (a C++ one, one using the C++ wrapper, a C one
# using the C API, and that C one again in a project that enables only C), and
# runs each linked shared and static.
# Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR, MODEL, GENERATOR.
if(NOT EXISTS ${MODEL})
  message("SKIPPED: missing shared file ${MODEL}")
  return()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer_c -B ${WORK_DIR}/build_c -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build_c)
foreach(app consumer_shared consumer_static)
  run(${WORK_DIR}/build/${app} ${MODEL})
  message(STATUS "${app}: ${last_output}")
  if(NOT last_output MATCHES "has 48 tensors")
    message(FATAL_ERROR "${app} printed: ${last_output}")
  endif()
endforeach()
foreach(app build/generate_shared build/generate_static build/wrapper_shared build/wrapper_static
        build_c/generate_c_shared build_c/generate_c_static)
  run(${WORK_DIR}/${app} ${MODEL} "Once upon a time")
  message(STATUS "${app}: ${last_output}")
  if(NOT last_output MATCHES "^Once upon a time, there was a little girl named Lily")
    message(FATAL_ERROR "${app} printed: ${last_output}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
