# stabfuzz monitor: CESTAC through training (datasets through zlib, models, reports, sweep).
find_package(ZLIB REQUIRED)
target_sources(stabfuzz_core PRIVATE
  harness/monitor/data.cc
  harness/monitor/trace.cc
  harness/monitor/train.cc
  harness/monitor/output.cc
  harness/monitor/html.cc
  harness/monitor/sweep.cc
  harness/monitor/weights.cc
  harness/monitor/infer.cc
  harness/monitor/command.cc)
target_link_libraries(stabfuzz_core PUBLIC ZLIB::ZLIB)
# Where ci/bootstrap puts digits.csv.gz (data/ is not committed).
set_source_files_properties(harness/monitor/data.cc PROPERTIES
  COMPILE_DEFINITIONS "STABFUZZ_DATA_DIR=\"${CMAKE_SOURCE_DIR}/data\"")
