# Builds examples/user_kernel against an install with two C++ compilers (GCC and Clang), runs both
# programs and requires the same output, with the one-pass variance's digits lost and its
# cancellation site named, and the two-pass variance's digits kept.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DOUT=... -DCXX_A=g++ -DCXX_B=clang++ -DGENERATOR=...
#         [-DMAKE_PROGRAM=...] -P user_kernel_compilers.cmake
foreach(v BUILD_DIR SOURCE_DIR OUT CXX_A CXX_B GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "user_kernel_compilers.cmake: -D${v}=... missing")
  endif()
endforeach()
set(outputs "")
foreach(which A B)
  set(cxx "${CXX_${which}}")
  set(dir "${OUT}/${which}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -DBUILD_DIR=${BUILD_DIR} -DSOURCE_DIR=${SOURCE_DIR}
                          -DOUT=${dir} -DCXX=${cxx} -DGENERATOR=${GENERATOR}
                          -DMAKE_PROGRAM=${MAKE_PROGRAM} -DEXAMPLE=user_kernel
                          -P "${SOURCE_DIR}/tests/plugin/build_example.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building examples/user_kernel with ${cxx} failed:\n${log}")
  endif()
  execute_process(COMMAND "${dir}/build/user_kernel" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "user_kernel built with ${cxx} exited ${rc}:\n${out}${err}")
  endif()
  message(STATUS "user_kernel built with ${cxx}:\n${out}")
  set(out_${which} "${out}")
endforeach()
if(NOT out_A STREQUAL out_B)
  message(FATAL_ERROR "the ${CXX_A} and ${CXX_B} builds disagree:\n${out_A}\n---\n${out_B}")
endif()
# f64: the one-pass variance keeps fewer than 5 digits and its cancellation is named; the
# two-pass one keeps at least 12.
function(expect_digits kernel op bound)
  if(NOT out_A MATCHES "f64 ${kernel} [^\n]* digits ([0-9.]+)")
    message(FATAL_ERROR "no f64 ${kernel} line:\n${out_A}")
  endif()
  if(NOT CMAKE_MATCH_1 ${op} ${bound})
    message(FATAL_ERROR "${kernel} variance: ${CMAKE_MATCH_1} digits, expected ${op} ${bound}")
  endif()
endfunction()
expect_digits(one_pass LESS 5)
expect_digits(two_pass GREATER_EQUAL 12)
if(NOT out_A MATCHES "f64  cancellation x1 at user_kernel.cc:24")
  message(FATAL_ERROR "the one-pass cancellation (user_kernel.cc:24) is not reported:\n${out_A}")
endif()
