# Install rules and the stabfuzz CMake package: `cmake --install build --prefix P` installs the
# binary, the plugin headers and P/lib/cmake/stabfuzz/stabfuzzConfig.cmake, with which
# find_package(stabfuzz) gives stabfuzz::plugin (stabfuzz/plugin.h), stabfuzz::cestac (the
# CESTAC type in a user's own program) and, when GoogleTest is found, stabfuzz::gtest
# (stabfuzz/gtest.h: stabfuzz checks in a GoogleTest suite, run by the installed binary).
#   component stabfuzz_runtime: bin/stabfuzz
#   component stabfuzz_dev:     include/stabfuzz/*.h, share/stabfuzz/plugin/*.cc, lib/cmake/stabfuzz
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS stabfuzz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT stabfuzz_runtime)

# The headers a plugin includes: the ABI, the plugin macros and the CESTAC scalar they run.
# And stabfuzz::gtest's header, which runs the binary on a plugin from a GoogleTest test.
set(_stabfuzz_plugin_headers cestac.h gtest.h lowp.h plugin.h plugin_abi.h stoch.h stoch_engine.h
                              stoch_nearness.h stoch_slow_paths.h stoch_vexp.h)
list(TRANSFORM _stabfuzz_plugin_headers PREPEND ${CMAKE_SOURCE_DIR}/include/stabfuzz/)
install(FILES ${_stabfuzz_plugin_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stabfuzz
        COMPONENT stabfuzz_dev)
# The host/device CESTAC core (RNG, rounding patterns, statistics) that cestac.h and
# stoch_engine.h include.
install(FILES ${CMAKE_SOURCE_DIR}/include/stabfuzz/gpu/cestac_core.h
              ${CMAKE_SOURCE_DIR}/include/stabfuzz/gpu/cestac_stats.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stabfuzz/gpu COMPONENT stabfuzz_dev)
# Compiled into every plugin (INTERFACE_SOURCES): its entry point and its own CESTAC runtime, the
# very file stabfuzz is built from, so a plugin links no stabfuzz library.
install(FILES ${CMAKE_SOURCE_DIR}/harness/plugin/plugin_entry.cc
        DESTINATION ${CMAKE_INSTALL_DATADIR}/stabfuzz/plugin COMPONENT stabfuzz_dev)
install(FILES ${CMAKE_SOURCE_DIR}/harness/cestac/monitor.cc
        DESTINATION ${CMAKE_INSTALL_DATADIR}/stabfuzz/plugin RENAME cestac_monitor.cc
        COMPONENT stabfuzz_dev)
# stabfuzz::cestac (a program or test of the user's that computes with Stoch itself) also
# compiles the symbolizer that turns recorded sites into file:line.
install(FILES ${CMAKE_SOURCE_DIR}/harness/cestac/symbolize.cc
        DESTINATION ${CMAKE_INSTALL_DATADIR}/stabfuzz/plugin RENAME cestac_symbolize.cc
        COMPONENT stabfuzz_dev)

# A plugin's CESTAC code is compiled as stabfuzz's: the same FMA/AVX2 paths when stabfuzz has them.
set(STABFUZZ_PLUGIN_ARCH_FLAGS "")
if(STABFUZZ_HOST_HAS_FMA)
  set(STABFUZZ_PLUGIN_ARCH_FLAGS "-mfma;-mavx2")
endif()
if(STABFUZZ_HOST_HAS_AVX512)
  list(APPEND STABFUZZ_PLUGIN_ARCH_FLAGS -mavx512f -mavx512vl -mavx512dq -mavx512bw
       -mprefer-vector-width=256)
endif()
set(STABFUZZ_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(STABFUZZ_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR})
set(STABFUZZ_INSTALL_BINDIR ${CMAKE_INSTALL_BINDIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/stabfuzzConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/stabfuzzConfig.cmake
  INSTALL_DESTINATION lib/cmake/stabfuzz
  PATH_VARS STABFUZZ_INSTALL_INCLUDEDIR STABFUZZ_INSTALL_DATADIR STABFUZZ_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/stabfuzzConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/stabfuzzConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/stabfuzzConfigVersion.cmake
        DESTINATION lib/cmake/stabfuzz COMPONENT stabfuzz_dev)
