# Builds an example as a user would: installs stabfuzz's dev component (headers, CMake package)
# into OUT/prefix, then configures and builds examples/EXAMPLE (default: plugin) out of tree
# against it with the C++ compiler CXX. RUNTIME=ON also installs the binary; OPTION=NAME=VALUE is
# one more -D for the example's configure.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DOUT=... -DCXX=... -DGENERATOR=... [-DMAKE_PROGRAM=...]
#         [-DEXAMPLE=user_kernel] [-DRUNTIME=ON] [-DOPTION=NAME=VALUE] -P build_example.cmake
foreach(v BUILD_DIR SOURCE_DIR OUT CXX GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "build_example.cmake: -D${v}=... missing")
  endif()
endforeach()
if(NOT EXAMPLE)
  set(EXAMPLE plugin)
endif()
file(REMOVE_RECURSE "${OUT}")
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
endfunction()
set(components stabfuzz_dev)
if(RUNTIME)
  list(APPEND components stabfuzz_runtime)
endif()
foreach(component ${components})
  step("install ${component}" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${OUT}/prefix"
       --component ${component})
endforeach()
set(option "")
if(OPTION)
  set(option "-D${OPTION}")
endif()
set(make_program "")
if(MAKE_PROGRAM)
  set(make_program "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
# Empty flags: the example must build from what stabfuzz::plugin gives it, not from the caller's
# environment (a sanitizer build's CXXFLAGS).
step("configure" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/${EXAMPLE}" -B "${OUT}/build"
     -G "${GENERATOR}" ${make_program} "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS="
     "-DCMAKE_PREFIX_PATH=${OUT}/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${option})
step("build" "${CMAKE_COMMAND}" --build "${OUT}/build")
message(STATUS "example ${EXAMPLE} built with ${CXX}: ${OUT}/build")
