# Campaign tooling: the union check the merge and Slurm tests use (build/bin/campaign_union_check).
add_executable(campaign_union_check tests/campaign/union_check.cc)
target_link_libraries(campaign_union_check PRIVATE stabfuzz_core)
target_include_directories(campaign_union_check PRIVATE ${CMAKE_SOURCE_DIR})
