# Plugin tests: malformed plugins the loader must refuse, the example plugin built out of tree
# against an install (a ctest fixture, run once), and plugin_test / isolate_test over them.
set(STABFUZZ_BAD_PLUGIN_DIR ${CMAKE_BINARY_DIR}/tests/bad_plugins)
foreach(bad no_entry abi family dtype arity init_crash init_exit init_stdout init_hang)
  string(TOUPPER ${bad} upper)
  add_library(bad_plugin_${bad} MODULE ${CMAKE_SOURCE_DIR}/tests/plugin/bad_plugin.c)
  target_compile_definitions(bad_plugin_${bad} PRIVATE BAD_${upper}=1)
  target_include_directories(bad_plugin_${bad} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  set_target_properties(bad_plugin_${bad} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${STABFUZZ_BAD_PLUGIN_DIR} PREFIX "" OUTPUT_NAME ${bad})
  list(APPEND _bad_plugins bad_plugin_${bad})
endforeach()

set(STABFUZZ_EXAMPLE_DIR ${CMAKE_BINARY_DIR}/plugin_example)
set(_example_cmd ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
    -DOUT=${STABFUZZ_EXAMPLE_DIR} -DCXX=${CMAKE_CXX_COMPILER} -DGENERATOR=${CMAKE_GENERATOR}
    -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM} -P ${CMAKE_SOURCE_DIR}/tests/plugin/build_example.cmake)
add_test(NAME plugin_example_build COMMAND ${_example_cmd})
set_tests_properties(plugin_example_build PROPERTIES FIXTURES_SETUP plugin_example TIMEOUT 300
  LABELS asan)

# The public headers with both compilers: examples/user_kernel built against the install with GCC
# and with Clang must print the same digits and sites; examples/plugin built with GCC must give
# the findings of the Clang build (plugin_test's GccPluginMatchesClangPlugin).
find_program(STABFUZZ_GXX NAMES g++-12 g++)
find_program(STABFUZZ_CLANGXX NAMES clang++-14 clang++)
if(STABFUZZ_GXX AND STABFUZZ_CLANGXX)
  add_test(NAME user_kernel_gcc_clang COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/user_kernel_example
    -DCXX_A=${STABFUZZ_GXX} -DCXX_B=${STABFUZZ_CLANGXX} -DGENERATOR=${CMAKE_GENERATOR}
    -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM} -P ${CMAKE_SOURCE_DIR}/tests/plugin/user_kernel_compilers.cmake)
  set_tests_properties(user_kernel_gcc_clang PROPERTIES TIMEOUT 300)
  set(STABFUZZ_EXAMPLE_GCC_DIR ${CMAKE_BINARY_DIR}/plugin_example_gcc)
  add_test(NAME plugin_example_build_gcc COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUT=${STABFUZZ_EXAMPLE_GCC_DIR} -DCXX=${STABFUZZ_GXX}
    -DGENERATOR=${CMAKE_GENERATOR} -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
    -P ${CMAKE_SOURCE_DIR}/tests/plugin/build_example.cmake)
  # a second setup test of the plugin_example fixture
  set_tests_properties(plugin_example_build_gcc PROPERTIES FIXTURES_SETUP plugin_example
                       TIMEOUT 300)
else()
  message(STATUS "g++ or clang++ not found: the GCC/Clang example tests are not built")
endif()

add_executable(plugin_test ${CMAKE_SOURCE_DIR}/tests/plugin/plugin_test.cc)
target_link_libraries(plugin_test PRIVATE stabfuzz_core GTest::gtest GTest::gtest_main)
list(JOIN _example_cmd "' '" _example_sh)
target_compile_definitions(plugin_test PRIVATE
  STABFUZZ_BINARY="$<TARGET_FILE:stabfuzz>"
  STABFUZZ_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  STABFUZZ_BAD_PLUGIN_DIR="${STABFUZZ_BAD_PLUGIN_DIR}"
  STABFUZZ_EXAMPLE_PLUGIN="${STABFUZZ_EXAMPLE_DIR}/build/libstabfuzz_example.so"
  # run by the test itself when the library is missing (the executable run outside ctest)
  STABFUZZ_EXAMPLE_BUILD="'${_example_sh}'")
target_include_directories(plugin_test PRIVATE ${CMAKE_SOURCE_DIR})
add_dependencies(plugin_test stabfuzz ${_bad_plugins})
if(STABFUZZ_EXAMPLE_GCC_DIR)
  target_compile_definitions(plugin_test PRIVATE
    STABFUZZ_EXAMPLE_PLUGIN_GCC="${STABFUZZ_EXAMPLE_GCC_DIR}/build/libstabfuzz_example.so")
endif()
# Label asan (tests/CMakeLists.txt): the loader reads libraries it did not build.
stabfuzz_discover_tests(plugin_test "*" "" FIXTURES_REQUIRED plugin_example)

# stabfuzz/gtest.h: examples/gtest built against an install with the build's compiler and with
# g++ (warnings as errors), its stable test passing and its naive one failing with a nan
# finding and a replay line that replays; and the header's own test against the built binary.
function(stabfuzz_gtest_example name cxx)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/${name} -DCXX=${cxx}
    -DGENERATOR=${CMAKE_GENERATOR} -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
    -P ${CMAKE_SOURCE_DIR}/tests/plugin/gtest_example.cmake)
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()
stabfuzz_gtest_example(gtest_example ${CMAKE_CXX_COMPILER})
if(STABFUZZ_GXX)
  stabfuzz_gtest_example(gtest_example_gcc ${STABFUZZ_GXX})
endif()
add_executable(gtest_header_test ${CMAKE_SOURCE_DIR}/tests/plugin/gtest_header_test.cc)
target_link_libraries(gtest_header_test PRIVATE GTest::gtest GTest::gtest_main)
target_include_directories(gtest_header_test PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_compile_definitions(gtest_header_test PRIVATE
  STABFUZZ_GTEST_EXECUTABLE="$<TARGET_FILE:stabfuzz>"
  STABFUZZ_BAD_PLUGIN_DIR="${STABFUZZ_BAD_PLUGIN_DIR}"
  STABFUZZ_EXAMPLE_PLUGIN="${STABFUZZ_EXAMPLE_DIR}/build/libstabfuzz_example.so")
add_dependencies(gtest_header_test stabfuzz ${_bad_plugins})
# Run directories kept for findings go under the build tree (GoogleTest's TempDir()).
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/tests/gtest_header_tmp)
gtest_discover_tests(gtest_header_test DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED plugin_example
             ENVIRONMENT "TEST_TMPDIR=${CMAKE_BINARY_DIR}/tests/gtest_header_tmp")

stabfuzz_test(isolate_test campaign/isolate_test.cc ASAN *)
