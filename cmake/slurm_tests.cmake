# Slurm campaign tests (tests/campaign/slurm_test.sh): slurm_scripts runs ci/slurm's scripts
# without Slurm; slurm_campaign submits through ci/slurm/submit to a local one-node cluster and
# skips (77) without root or Slurm unless STABFUZZ_REQUIRE lists slurm, as ci/test sets. Only in
# builds without sanitizers: they start daemons and run the plain binary; one build is enough.
# slurm_campaign (~45 s, serial) is slow: `ci/test --full` runs it, ci/test does not.
if(NOT STABFUZZ_SANITIZE)
  set(_slurm_test bash ${CMAKE_SOURCE_DIR}/tests/campaign/slurm_test.sh)
  set(_slurm_bins $<TARGET_FILE:stabfuzz> $<TARGET_FILE:campaign_union_check>)
  add_test(NAME slurm_scripts COMMAND ${_slurm_test} --scripts ${_slurm_bins})
  set_tests_properties(slurm_scripts PROPERTIES TIMEOUT 120 LABELS slurm)
  add_test(NAME slurm_campaign COMMAND ${_slurm_test} ${_slurm_bins})
  set_tests_properties(slurm_campaign PROPERTIES
    SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 300 LABELS "slurm;slow")
endif()
