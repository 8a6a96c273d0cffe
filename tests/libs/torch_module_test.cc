// The libtorch module's kernels (libs/torch/torch_module.cc, libstabfuzz_torch.so): its entry
// point, layouts and parameters on inputs whose results are known, and its errors.
#include <dlfcn.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/pipeline/case.h"
#include "libs/libraries.h"
#include "libs/torch/torch_api.h"
#include "tests/libs/library_check.h"
#include "tests/support/require.h"

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_TORCH
TEST(TorchTargets, LayoutsAreExact) {
  Input mm;  // A [2, 3], B [3, 2] row-major: C = [[5, 1], [11, 1]]
  mm.args = {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {1, 0, -1, -1, 2, 1}}};
  expect_exact(*default_registry().find_target("gemm/torch/matmul").second, mm, {5, 1, 11, 1});
  Input ce;  // cross_entropy of equal logits: log 4 whatever the target; kl_div of p = q: 0
  ce.args = {{{4}, {1, 1, 1, 1}}};
  ce.params = {{"target", 3}};
  ce.dtype = DType::f64;
  const auto y =
      default_registry().find_target("cross_entropy/torch/cross_entropy").second->native(ce);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_DOUBLE_EQ(y[0], std::log(4.0));
}

// The module as libs/torch/torch.cc loads it (the same handle: one copy per process).
const libs::TorchModule& torch_module() {
  static const libs::TorchModule* m = [] {
    const std::string path = libs::module_path("STABFUZZ_TORCH_MODULE", "libstabfuzz_torch.so");
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw std::runtime_error(dlerror());
    using Entry = const libs::TorchModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(h, "stabfuzz_torch_module"));
    if (!entry) throw std::runtime_error(path + " has no stabfuzz_torch_module");
    return entry();
  }();
  return *m;
}

// Kernel `id` on one row per argument (shape [n]) in dtype d.
std::vector<double> run(const std::string& id, std::vector<std::vector<double>> rows,
                        std::vector<std::pair<std::string, double>> params = {},
                        DType d = DType::f64) {
  Input in;
  in.dtype = d;
  for (auto& r : rows) in.args.push_back(Tensor{{static_cast<int64_t>(r.size())}, std::move(r)});
  in.params = std::move(params);
  return torch_module().run(id, in);
}

TEST(TorchModule, IsThisBuildsAbiAndNamesItsVersion) {
  const libs::TorchModule& m = torch_module();
  EXPECT_EQ(m.abi, libs::kTorchModuleAbi);
  ASSERT_NE(m.version, nullptr);
  const std::string version = m.version;
  EXPECT_FALSE(version.empty());
  const auto [f, t] = default_registry().find_target("exp/torch/exp");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->description.find(version.substr(0, version.find('+'))), std::string::npos)
      << t->description << " vs " << version;
}

TEST(TorchModule, KernelsComputeInTheInputsDtypeAndShape) {
  EXPECT_EQ(run("sum/torch/sum", {{1, 2, 3}}), std::vector<double>{6});
  EXPECT_EQ(run("sum/torch/sum", {{1, 2, 3}}, {}, DType::bf16), std::vector<double>{6});
  // bf16 keeps 8 significant bits: the sum 1 + 2^-9 comes back rounded to 1, f32 keeps it.
  EXPECT_EQ(run("sum/torch/sum", {{1, 0x1p-9}}, {}, DType::bf16), std::vector<double>{1});
  EXPECT_EQ(run("sum/torch/sum", {{1, 0x1p-9}}, {}, DType::f32), std::vector<double>{1 + 0x1p-9});
  EXPECT_EQ(run("cumsum/torch/cumsum", {{1, 2, 3}}), (std::vector<double>{1, 3, 6}));
  EXPECT_DOUBLE_EQ(run("logaddexp/torch/logaddexp", {{0}, {0}}).at(0), std::log(2.0));
  // kl_div(logq, p) = sum p (log p - logq), 0 where p = 0.
  EXPECT_EQ(run("kl_div/torch/kl_div", {{0, -1}, {1, 0}}), std::vector<double>{0});
}

TEST(TorchModule, ParametersReachTheKernels) {
  // var's `unbiased`: {1, 3} has sum of squares 2 over n = 2 or n - 1 = 1.
  EXPECT_EQ(run("var/torch/var", {{1, 3}}, {{"unbiased", 0}}), std::vector<double>{1});
  EXPECT_EQ(run("var/torch/var", {{1, 3}}, {{"unbiased", 1}}), std::vector<double>{2});
  // eps is added to the biased variance: (x - 2) / sqrt(1 + 1/4).
  const double y = 1 / std::sqrt(1.25);
  const auto ln = run("layer_norm/torch/layer_norm", {{1, 3}}, {{"eps", 0.25}});
  ASSERT_EQ(ln.size(), 2u);
  EXPECT_DOUBLE_EQ(ln[0], -y);
  EXPECT_DOUBLE_EQ(ln[1], y);
  // softplus as users call it, threshold 20: above it the kernel returns x itself.
  EXPECT_EQ(run("softplus/torch/softplus", {{21}}), std::vector<double>{21});
  EXPECT_DOUBLE_EQ(run("softplus/torch/softplus", {{0}}).at(0), std::log(2.0));
  // cross_entropy's target picks the logit: -log softmax([0, log 3])_t.
  EXPECT_DOUBLE_EQ(
      run("cross_entropy/torch/cross_entropy", {{0, std::log(3.0)}}, {{"target", 1}}).at(0),
      -std::log(0.75));
  EXPECT_DOUBLE_EQ(
      run("cross_entropy/torch/cross_entropy", {{0, std::log(3.0)}}, {{"target", 0}}).at(0),
      -std::log(0.25));
}

TEST(TorchModule, UnknownIdsAndMissingParametersAreLogicErrors) {
  try {
    run("nosuch/torch/nosuch", {{1}});
    FAIL() << "ran a kernel that does not exist";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel for nosuch/torch/nosuch"), std::string::npos)
        << e.what();
  }
  try {
    run("layer_norm/torch/layer_norm", {{1, 3}});
    FAIL() << "ran layer_norm without eps";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'eps' not given"), std::string::npos)
        << e.what();
  }
}

// Every catalog entry has its kernel in the module (an entry without one is a logic_error naming
// it, whatever the input).
TEST(TorchModule, EveryCatalogEntryHasAKernel) {
  for (const auto& entry : libs::torch_catalog()) {
    const Family* f = default_registry().find_family(entry.family);
    ASSERT_NE(f, nullptr) << entry.id;
    try {
      torch_module().run(entry.id, pipeline::make_case(*f, DType::f64, 1, 0));
    } catch (const std::logic_error& e) {
      EXPECT_EQ(std::string(e.what()).find("no kernel"), std::string::npos) << e.what();
    } catch (const std::exception&) {
      // a parameter that torch.cc would have added, a shape that ATen refuses: not this test's
    }
  }
}
#else
TEST(TorchModule, NotBuiltIn) {
  STABFUZZ_SKIP_UNLESS_REQUIRED("torch", "built without libtorch: no module to load");
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
