// The oneDNN calls (libs/onednn/onednn_calls.cc), on the linked oneDNN and on oneDNN 3's module:
// each primitive on inputs whose results are known, the layouts, the scalar parameter, refusals.
#include <dlfcn.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "libs/libraries.h"
#include "libs/onednn/onednn_api.h"
#include "tests/libs/library_check.h"
#include "tests/libs/onednn_layouts.h"
#include "tests/support/require.h"

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONEDNN
TEST(OnednnTargets, LayoutsAreExact) { expect_exact_layouts("onednn"); }

Tensor vec(std::vector<double> v) { return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)}; }

// Primitive `name` of `m` in f32 on `args`.
std::vector<double> run(const libs::OnednnModule& m, const char* name, std::vector<Tensor> args,
                        double scalar = 0) {
  return m.run(name, DType::f32, args, scalar);
}

void expect_near(const std::vector<double>& y, const std::vector<double>& expected,
                 double tol = 1e-6) {
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], tol) << "output " << i;
}

TEST(OnednnCalls, TheLinkedModuleIsTheVersionItsTargetsName) {
  const libs::OnednnModule& m = libs::linked_onednn();
  EXPECT_EQ(&m, &libs::linked_onednn());
  EXPECT_EQ(m.abi, libs::kOnednnModuleAbi);
  EXPECT_GE(m.major, 2);
  const auto [f, t] = default_registry().find_target("exp/onednn/eltwise_exp");
  ASSERT_NE(t, nullptr);
  const std::string version = "oneDNN " + std::to_string(m.major) + "." + std::to_string(m.minor) +
                              "." + std::to_string(m.patch) + " ";
  EXPECT_EQ(t->description.rfind(version, 0), 0u) << t->description;
}

TEST(OnednnCalls, EachPrimitiveGivesTheKnownResult) {
  const libs::OnednnModule& m = libs::linked_onednn();
  EXPECT_EQ(run(m, "softmax", {vec({0, 0, 0, 0})}), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  // oneDNN's log errs by up to 1e-5 relative (onednn_test.cc's known findings).
  expect_near(run(m, "logsoftmax", {vec({1, 1})}), {-std::log(2.0), -std::log(2.0)}, 1e-5);
  expect_near(run(m, "eltwise_exp", {vec({0, 1})}), {1, std::exp(1.0)});
  expect_near(run(m, "eltwise_logistic", {vec({0})}), {0.5});
  expect_near(run(m, "eltwise_tanh", {vec({0, 0.5})}), {0, std::tanh(0.5)});
  // The scalar is the eltwise primitive's alpha: swish is x sigmoid(alpha x).
  expect_near(run(m, "eltwise_swish", {vec({0, 2})}, 1), {0, 2 / (1 + std::exp(-2.0))});
  expect_near(run(m, "eltwise_swish", {vec({0, 2})}, 0), {0, 1});
  expect_near(run(m, "eltwise_gelu_erf", {vec({0, 1})}),
              {0, 0.5 * (1 + std::erf(1 / std::sqrt(2.0)))});
  // matmul: [1, 2] x [2, 1].
  EXPECT_EQ(run(m, "matmul", {{{1, 2}, {1, 2}}, {{2, 1}, {3, 4}}}), std::vector<double>{11});
  // Reductions of the row to one value; the scalar is norm_lp_sum's p.
  EXPECT_EQ(run(m, "reduction_sum", {vec({1, 2, 3})}), std::vector<double>{6});
  EXPECT_EQ(run(m, "reduction_mean", {vec({1, 2, 3, 6})}), std::vector<double>{3});
  EXPECT_EQ(run(m, "reduction_norm_lp_sum", {vec({3, 4})}, 2), std::vector<double>{5});
}

// The normalizations' scalar is eps, added to the biased variance: (x - 2) / sqrt(1 + 1/4).
TEST(OnednnCalls, NormalizationsAddTheScalarToTheVariance) {
  const libs::OnednnModule& m = libs::linked_onednn();
  const double y = 1 / std::sqrt(1.25);
  expect_near(run(m, "layer_normalization", {vec({1, 3})}, 0.25), {-y, y});
  // [2, 2] with channels as columns: {1, 3} and the constant {5, 5}.
  expect_near(run(m, "batch_normalization", {{{2, 2}, {1, 5, 3, 5}}}, 0.25), {-y, 0, y, 0});
}

TEST(OnednnCalls, RefusalsAreRuntimeErrorsAndUnknownPrimitivesLogicErrors) {
  const libs::OnednnModule& m = libs::linked_onednn();
  try {  // oneDNN's CPU engine has no f64
    m.run("softmax", DType::f64, {vec({1, 2})}, 0);
    FAIL() << "oneDNN ran an f64 softmax";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("oneDNN: ", 0), 0u) << e.what();
  }
  try {
    run(m, "eltwise_nosuch", {vec({1})});
    FAIL() << "ran a primitive that does not exist";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no primitive eltwise_nosuch"), std::string::npos)
        << e.what();
  }
}

// The same calls compiled against oneDNN 3 (libstabfuzz_onednn3.so): its version, the calls, and
// eltwise_logsigmoid, which oneDNN 3 removed.
TEST(OnednnCalls, OneDnn3ModuleRunsTheCallsOfItsVersion) {
  if (!default_registry().find_target("log/onednn3/eltwise_log").second)
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn3", "oneDNN 3 not loaded: only the linked calls are run");
  const std::string path = libs::module_path("STABFUZZ_ONEDNN3_MODULE", "libstabfuzz_onednn3.so");
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  ASSERT_NE(h, nullptr) << ::dlerror();
  using Entry = const libs::OnednnModule* (*)();
  const auto entry = reinterpret_cast<Entry>(::dlsym(h, "stabfuzz_onednn3_module"));
  ASSERT_NE(entry, nullptr);
  const libs::OnednnModule& m3 = *entry();
  EXPECT_EQ(m3.abi, libs::kOnednnModuleAbi);
  EXPECT_EQ(m3.major, 3);
  EXPECT_EQ(run(m3, "matmul", {{{1, 2}, {1, 2}}, {{2, 1}, {3, 4}}}), std::vector<double>{11});
  EXPECT_EQ(run(m3, "reduction_sum", {vec({1, 2, 3})}), std::vector<double>{6});
  EXPECT_THROW(run(m3, "eltwise_logsigmoid", {vec({0})}), std::logic_error);
  if (libs::linked_onednn().major < 3)
    expect_near(run(libs::linked_onednn(), "eltwise_logsigmoid", {vec({0})}), {-std::log(2.0)},
                1e-5);
  ::dlclose(h);
}
#else
TEST(OnednnCalls, NotBuiltIn) {
  STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "built without oneDNN: no oneDNN call to run");
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
