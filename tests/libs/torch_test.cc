// libtorch targets: registered per the catalog, accurate on typical inputs, a missing module a
// clear error (the kernels themselves: torch_module_test.cc).
#include <cstdio>
#include <cstdlib>

#include "tests/libs/library_check.h"
#include "tests/support/require.h"

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_TORCH
TEST(TorchTargets, EveryCatalogEntryIsRegistered) {
  const auto targets = registered(libs::torch_catalog());
  EXPECT_EQ(targets.size(), libs::torch_catalog().size());
}

// Library findings on the first regime's inputs (libtorch 1.13.1): softplus's default threshold 20
// returns x itself (f64: 2.4e5 ulps at x = 20.9); gelu and gelu_tanh form 1 + erf / 1 + tanh and
// cancel in the negative tail (-0 for -2.2e-16); binary_cross_entropy_with_logits takes
// log(e^-m + e^(-x-m)) and returns 0 for losses below u (exact 1.4e-105).
const std::set<std::string> kKnownFindings = {
    "softplus/torch/softplus f64",
    "gelu/torch/gelu f64",
    "gelu/torch/gelu f32",
    "gelu_tanh/torch/gelu_tanh f64",
    "gelu_tanh/torch/gelu_tanh f32",
    "bce_with_logits/torch/binary_cross_entropy_with_logits f64",
    "bce_with_logits/torch/binary_cross_entropy_with_logits f32",
    "bce_with_logits/torch/binary_cross_entropy_with_logits bf16"};

// ATen picks its bf16 gelu kernel by CPU capability: the finding fired on the AVX2 machines of
// earlier runs, and did not fire on an AMD EPYC Zen 4 (AVX-512 BF16) under ci/test.
const std::set<std::string> kCpuDependent = {"gelu/torch/gelu bf16"};

TEST(TorchTargets, EveryFindingOnARegimeSampleIsTriaged) {
  expect_findings_triaged(libs::torch_catalog(), 8);
}

TEST(TorchTargets, AccurateOnTypicalInputs) {
  for (const auto& [f, t] : registered(libs::torch_catalog()))
    for (DType d : t->dtypes) expect_accurate(*f, *t, d, 2, kKnownFindings, kCpuDependent);
}

// Runs a torch target with the module path pointing nowhere; exits 3 on the expected error.
[[noreturn]] void run_without_module() {
  setenv("STABFUZZ_TORCH_MODULE", "/nonexistent/libstabfuzz_torch.so", 1);
  Input in;
  in.args = {{{2}, {1, 2}}};
  try {
    default_registry().find_target("exp/torch/exp").second->native(in);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(3);
  }
  std::exit(0);
}

// In a fresh process (the module loads once per process): a module that is not there is one clear
// error naming it, not a crash.
TEST(TorchTargets, AMissingModuleIsAClearError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_without_module(), ::testing::ExitedWithCode(3),
              "cannot load the libtorch module.*nonexistent");
}
#else
TEST(TorchTargets, ListedUnavailableWithTheReason) {
  expect_listed_unavailable(libs::torch_catalog(), "ci/bootstrap --with-torch");
  STABFUZZ_SKIP_UNLESS_REQUIRED("torch",
                                "built without libtorch: only the unavailable listing is checked");
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
