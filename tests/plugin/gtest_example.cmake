# examples/gtest, the GoogleTest integration, as a user builds and runs it: build_example.cmake
# installs stabfuzz (binary and dev component) into OUT/prefix and builds the example against it
# with the C++ compiler CXX and warnings as errors (stabfuzz/gtest.h included as a user header).
# Then MyKernelsSoftmax.Stable must pass; MyKernelsSoftmax.Naive must fail with a nan finding (exp
# overflows, inf / inf) with its input, digits, exact vs computed value, the CESTAC overflow site
# and a replay line, and that line must replay it; and with the binary missing
# (STABFUZZ_EXECUTABLE) the stable test must fail too.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DOUT=... -DCXX=... -DGENERATOR=... [-DMAKE_PROGRAM=...]
#         -P gtest_example.cmake
foreach(v BUILD_DIR SOURCE_DIR OUT CXX GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "gtest_example.cmake: -D${v}=... missing")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" -DBUILD_DIR=${BUILD_DIR} -DSOURCE_DIR=${SOURCE_DIR}
                        -DOUT=${OUT} -DCXX=${CXX} -DGENERATOR=${GENERATOR}
                        -DMAKE_PROGRAM=${MAKE_PROGRAM} -DEXAMPLE=gtest -DRUNTIME=ON
                        -DOPTION=STABFUZZ_EXAMPLE_STRICT=ON
                        -P "${SOURCE_DIR}/tests/plugin/build_example.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building examples/gtest with ${CXX} failed:\n${log}")
endif()
set(test_exe "${OUT}/build/softmax_test")
# The kept run directories of failing checks go under OUT, not /tmp (GoogleTest's TempDir()).
file(MAKE_DIRECTORY "${OUT}/tmp")

function(run_test filter expect_rc var)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "TEST_TMPDIR=${OUT}/tmp" ${ARGN} "${test_exe}"
                          "--gtest_filter=${filter}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "softmax_test --gtest_filter=${filter} (${CXX}): exit ${rc}\n${out}")
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "softmax_test --gtest_filter=${filter}: exit ${rc}, expected ${expect_rc}")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()
function(expect out regex what)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${out}")
  endif()
endfunction()

# The stable softmax passes.
run_test(MyKernelsSoftmax.Stable 0 out)
expect("${out}" "\\[       OK \\] MyKernelsSoftmax.Stable" "the stable softmax")
expect("${out}" "\\[  PASSED  \\] 1 test" "the stable softmax")

# The naive one fails, with the finding spelled out.
run_test(MyKernelsSoftmax.Naive 1 out)
expect("${out}" "\\[  FAILED  \\] MyKernelsSoftmax.Naive" "the naive softmax")
expect("${out}" "softmax/mykernels/naive is numerically unstable \\(seed 1, 30 inputs"
       "the naive softmax")
expect("${out}" "finding 1 of [0-9]+: nan in softmax/mykernels/naive f64" "the finding's kind")
foreach(line "  input:    x0\\[[0-9]+\\] = {" "  output\\[[0-9]+\\]: exact [^ ]+ \\(0x"
             "  error:    [^ ]+ ULP" "  digits:   [0-9.]+ significant digits"
             "  sites:    overflow x[0-9]+ at softmax_kernels.cc:[0-9]+")
  expect("${out}" "${line}" "the finding's details")
endforeach()
# The replay line runs the installed binary on the plugin; run as printed, it finds the NaN again
# (exit 1).
if(NOT out MATCHES "  replay:   ([^\n]+)\n")
  message(FATAL_ERROR "no replay line in:\n${out}")
endif()
set(replay "${CMAKE_MATCH_1}")
expect("${replay}" "^${OUT}/prefix/bin/stabfuzz --plugin [^ ]+libmykernels.so --target softmax --impl softmax/mykernels/naive .*--case [0-9]+"
       "the replay line")
separate_arguments(replay_argv UNIX_COMMAND "${replay}")
execute_process(COMMAND ${replay_argv} --quiet --out "${OUT}/replay" RESULT_VARIABLE rc
                OUTPUT_VARIABLE rout ERROR_VARIABLE rout)
message(STATUS "replay: exit ${rc}\n${rout}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the replay line exited ${rc}, expected 1 (the finding again):\n${rout}")
endif()
file(READ "${OUT}/replay/findings.jsonl" replayed)
expect("${replayed}" "\"kind\":\"nan\"" "the replayed finding")

# No binary: a failure that says so, never a pass.
run_test(MyKernelsSoftmax.Stable 1 out "STABFUZZ_EXECUTABLE=${OUT}/no-such-dir/stabfuzz")
expect("${out}" "stabfuzz did not run: cannot run ${OUT}/no-such-dir/stabfuzz: No such file"
       "the missing binary")
