# The libFuzzer engine: `stabfuzz fuzz` (harness/fuzz/) and standalone fuzz/<family>_fuzz targets.
target_sources(stabfuzz_core PRIVATE
  harness/fuzz/decoder.cc
  harness/fuzz/feedback.cc
  harness/fuzz/executor.cc
  harness/fuzz/engine.cc
  harness/fuzz/compare.cc
  harness/fuzz/fuzz_cli.cc)

if(NOT STABFUZZ_HAVE_LIBFUZZER)
  return()
endif()

# Code coverage feedback where it means something: the implementations under test and the planted
# bugs, not the harness, the oracle or MPFR. Every binary that links them gets libFuzzer's runtime
# (fuzzer_no_main keeps our own main; nothing runs unless `stabfuzz fuzz` starts it). Edge counters,
# indirect calls and the PC table of -fsanitize=fuzzer-no-link, without its trace-cmp: the compares
# it would trace in these files are the CESTAC engine's inlined fast-path tests (a call per
# operation, 17 % of a layer_norm fuzz execution), not comparisons an input could be steered by.
option(STABFUZZ_FUZZ_COVERAGE "Instrument families/, targets/ and injectors/ for libFuzzer's coverage" ON)
if(STABFUZZ_FUZZ_COVERAGE)
  get_target_property(_stabfuzz_sources stabfuzz_core SOURCES)
  foreach(_src IN LISTS _stabfuzz_sources)
    if(_src MATCHES "^(families|targets|injectors)/.*\\.cc$" AND NOT _src STREQUAL "families/regimes.cc")
      set_property(SOURCE ${_src} APPEND PROPERTY COMPILE_OPTIONS
                   -fsanitize-coverage=inline-8bit-counters,indirect-calls,pc-table)
    endif()
  endforeach()
endif()
target_link_libraries(stabfuzz_core PUBLIC ${STABFUZZ_FUZZER_NO_MAIN})

# Standard LLVMFuzzerTestOneInput targets (OSS-Fuzz, ClusterFuzzLite, AFL++): abort on a finding.
set(STABFUZZ_FUZZ_FAMILIES softmax log_softmax layer_norm var logsumexp gemm
    CACHE STRING "Families that get a fuzz/<family>_fuzz executable")
foreach(_family IN LISTS STABFUZZ_FUZZ_FAMILIES)
  add_executable(${_family}_fuzz harness/fuzz/family_fuzz.cc)
  target_compile_definitions(${_family}_fuzz PRIVATE STABFUZZ_FUZZ_FAMILY="${_family}")
  target_link_libraries(${_family}_fuzz PRIVATE stabfuzz_core)
  target_link_options(${_family}_fuzz PRIVATE -fsanitize=fuzzer)
  set_target_properties(${_family}_fuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/fuzz)
endforeach()
