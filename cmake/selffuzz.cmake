# libFuzzer targets for stabfuzz's own parsers (tests/selffuzz/selffuzz.cc, docs/robustness.md):
# bin/selffuzz/<target>_selffuzz, run by ci/selffuzz over corpora/harness/<target>/.
#
# The parsers' own files are compiled again here with AddressSanitizer, UndefinedBehaviorSanitizer
# and libFuzzer's coverage; every other object comes uninstrumented from stabfuzz_core and
# stabfuzz_cli (the linker takes a definition from these objects first and never pulls the
# archive's copy of the same file). So the sanitizers and the coverage feedback sit on the code
# under test, and the build costs a dozen files, not a second build of everything.
if(NOT STABFUZZ_HAVE_LIBFUZZER)
  return()
endif()

set(STABFUZZ_SELFFUZZ_TARGETS corpus findings checkpoint model decoder cli json)
if(STABFUZZ_HAVE_ONNX)
  list(APPEND STABFUZZ_SELFFUZZ_TARGETS onnx npy)  # the ONNX reader and interpreter, .npy inputs
endif()
set(_selffuzz_sanitizers -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=all)
add_library(stabfuzz_selffuzz_parsers OBJECT
  reports/json.cc
  reports/run_data.cc
  reports/findings.cc
  harness/corpus/corpus.cc
  harness/campaign/campaign_state.cc
  harness/campaign/plan.cc
  harness/core/select.cc
  harness/core/duration.cc
  harness/monitor/weights.cc
  harness/fuzz/decoder.cc
  harness/cli/command.cc
  harness/cli/flags.cc
  harness/cli/campaign_command.cc
  $<$<BOOL:${STABFUZZ_HAVE_ONNX}>:harness/onnx/model.cc>
  $<$<BOOL:${STABFUZZ_HAVE_ONNX}>:harness/onnx/npy.cc>)
target_link_libraries(stabfuzz_selffuzz_parsers PRIVATE stabfuzz_cli nlohmann_json::nlohmann_json
                      $<$<BOOL:${STABFUZZ_HAVE_ONNX}>:onnx_proto>)
target_compile_options(stabfuzz_selffuzz_parsers PRIVATE ${_selffuzz_sanitizers})

foreach(_target IN LISTS STABFUZZ_SELFFUZZ_TARGETS)
  add_executable(${_target}_selffuzz tests/selffuzz/selffuzz.cc)
  target_compile_definitions(${_target}_selffuzz PRIVATE STABFUZZ_SELFFUZZ_TARGET="${_target}")
  target_compile_options(${_target}_selffuzz PRIVATE ${_selffuzz_sanitizers})
  target_sources(${_target}_selffuzz PRIVATE $<TARGET_OBJECTS:stabfuzz_selffuzz_parsers>)
  target_link_libraries(${_target}_selffuzz PRIVATE stabfuzz_cli)
  if(STABFUZZ_HAVE_ONNX)
    target_compile_definitions(${_target}_selffuzz PRIVATE STABFUZZ_HAVE_ONNX=1)
    target_link_libraries(${_target}_selffuzz PRIVATE onnx_proto)
  endif()
  target_link_options(${_target}_selffuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(${_target}_selffuzz PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/selffuzz)
endforeach()
