# The CESTAC type without x86 SIMD: the CESTAC tests compiled again with AVX, AVX2 and FMA turned
# off (the vector-extension paths of stabfuzz/stoch_engine.h), with their own copy of the CESTAC
# runtime, so that no AVX instance of an inline function is linked in. Also the proof that the
# headers need no AVX2/FMA build (a CPU without them, or another architecture).
set(_portable_sources
  ${CMAKE_SOURCE_DIR}/tests/cestac/stoch_test.cc
  ${CMAKE_SOURCE_DIR}/tests/cestac/rounding_test.cc
  ${CMAKE_SOURCE_DIR}/tests/cestac/uncollapse_test.cc
  ${CMAKE_SOURCE_DIR}/tests/cestac/stoch_exp_test.cc
  ${CMAKE_SOURCE_DIR}/tests/cestac/cestac_core_test.cc
  ${CMAKE_SOURCE_DIR}/harness/cestac/monitor.cc
  ${CMAKE_SOURCE_DIR}/harness/cestac/symbolize.cc
  ${CMAKE_SOURCE_DIR}/harness/core/entropy.cc)
add_executable(cestac_portable_test ${_portable_sources})
target_compile_features(cestac_portable_test PRIVATE cxx_std_20)
target_compile_options(cestac_portable_test PRIVATE -ffp-contract=off -fno-fast-math -Wall -Wextra
  -Wno-psabi $<$<CXX_COMPILER_ID:Clang>:-gline-tables-only> -gdwarf-4 -mno-avx -mno-avx2 -mno-fma
  -ffile-prefix-map=${CMAKE_SOURCE_DIR}/= -ffile-prefix-map=${CMAKE_BINARY_DIR}=.)
if(STABFUZZ_SANITIZE)
  target_compile_options(cestac_portable_test PRIVATE -fsanitize=${STABFUZZ_SANITIZE}
                         -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(cestac_portable_test PRIVATE -fsanitize=${STABFUZZ_SANITIZE})
endif()
target_include_directories(cestac_portable_test PRIVATE ${CMAKE_SOURCE_DIR}
                           ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(cestac_portable_test PRIVATE PkgConfig::MPFR rapidcheck_gtest rapidcheck
                      GTest::gmock GTest::gtest GTest::gtest_main Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(cestac_portable_test PRIVATE STABFUZZ_PORTABLE_BUILD=1)
gtest_discover_tests(cestac_portable_test DISCOVERY_TIMEOUT 60 TEST_PREFIX "portable."
                     PROPERTIES TIMEOUT 600)
