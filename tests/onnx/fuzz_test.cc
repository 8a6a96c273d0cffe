// `monitor infer --fuzz` (harness/onnx/fuzz.cc): inputs that break each unstable formulation's
// node, written as folders that replay the break.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/fuzz.h"
#include "harness/onnx/infer.h"
#include "harness/onnx/model.h"
#include "tests/support/onnx_graphs.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
// --fuzz, from inputs where each unstable graph is fine, finds within 100 trials (seed 1) an
// input that breaks the node the formulation puts the loss in, and its folder replays the break.
TEST(OnnxFuzz, FindsTheBreakingNodeAndItsFolderReplays) {
  struct Case {
    Model m;
    HostTensor start;
    std::string node;
  };
  const std::vector<Case> cases = {{naive_variance(), shifted(0), "difference"},
                                   {naive_softmax(), f32({1, 4}, {1, 2, -1, 0.5}), "exp"},
                                   {log_one_plus(), f32({4}, {0.5, 2, 3.25, 10}), "log"},
                                   {log_of_sigmoid(), f32({4}, {-1, 2, -3, 0.5}), "log"}};
  for (const auto& c : cases) {
    EXPECT_TRUE(infer(c.m, c.start).polluting.empty()) << c.node;
    const std::string dir = temp_dir("");
    const auto f = onnx::fuzz_inputs(c.m, {{"x", c.start}}, false, 1, 60.0, dir, 100);
    const onnx::FuzzBreak* hit = nullptr;
    for (const auto& b : f.breaks)
      if (b.node == c.node) hit = &b;
    ASSERT_NE(hit, nullptr) << c.node << ": " << f.trials << " trials, " << f.breaks.size()
                            << " breaks";
    Model m = c.m;
    m.input_types["x"] = static_cast<int32_t>(Elem::float32);
    const auto replay = onnx::infer(m, onnx::read_inputs(m, hit->dir), false, 1);
    EXPECT_NE(std::find(replay.polluting.begin(), replay.polluting.end(), c.node),
              replay.polluting.end())
        << onnx::infer_text(replay);
  }
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
