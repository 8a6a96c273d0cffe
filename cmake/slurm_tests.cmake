# Slurm campaign test: ci/slurm/submit on a local one-node cluster (tests/campaign/slurm_test.sh).
# Only in builds without sanitizers (it starts daemons and runs the plain binary; one run is
# enough); it skips (77) without root or Slurm unless STABFUZZ_REQUIRE_SLURM=1, as ci/test sets.
if(NOT STABFUZZ_SANITIZE)
  add_test(NAME slurm_campaign
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/campaign/slurm_test.sh
            $<TARGET_FILE:stabfuzz> $<TARGET_FILE:campaign_union_check>)
  set_tests_properties(slurm_campaign PROPERTIES
    SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 300 LABELS slurm)
endif()
