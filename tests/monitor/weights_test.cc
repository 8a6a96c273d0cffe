// The monitor's model file (harness/monitor/weights.cc): weights round-trip exactly as hex floats,
// and every malformed file is an InputError naming the file, the line and the problem.
#include "harness/monitor/weights.h"

#include <gtest/gtest.h>

#include <string>

#include "harness/monitor/train.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::monitor {
namespace {

ModelFile small_model(ModelKind kind, bool f64) {
  ModelFile m;
  m.spec.kind = kind;
  m.spec.height = m.spec.width = 4;
  m.spec.hidden = 3;
  m.spec.channels = 2;
  m.spec.classes = 2;
  m.data = "digits";
  m.f64 = f64;
  m.lr = 0.25;
  m.steps = 7;
  m.seed = 9;
  m.test_accuracy_mean = 0.875;
  m.params = init_params(m.spec, 9, !f64);
  if (f64) m.params.b2[0] = 0.1;  // not a float
  return m;
}

std::string error(const std::string& text) {
  try {
    parse_model_file(text, "m.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(MonitorWeights, RoundTripsExactly) {
  for (const auto kind : {ModelKind::mlp, ModelKind::cnn})
    for (const bool f64 : {false, true}) {
      const ModelFile m = small_model(kind, f64);
      const std::string dir = testing::temp_dir("");
      write_model_file(m, dir + "/model.txt");
      const ModelFile r = read_model_file(dir + "/model.txt");
      EXPECT_EQ(r.spec.kind, kind);
      EXPECT_EQ(r.f64, f64);
      EXPECT_EQ(r.spec.hidden, 3);
      EXPECT_EQ(r.spec.channels, 2);
      EXPECT_EQ(r.lr, 0.25);
      EXPECT_EQ(r.steps, 7);
      EXPECT_EQ(r.seed, 9u);
      EXPECT_EQ(r.test_accuracy_mean, 0.875);
      for (int i = 0; i < Params<double>::kTensors; ++i)
        EXPECT_EQ(r.params.tensor(i), m.params.tensor(i)) << i;
      EXPECT_EQ(model_file_text(r), model_file_text(m));
    }
}

TEST(MonitorWeights, MalformedFilesNameTheLineAndTheProblem) {
  const std::string text = model_file_text(small_model(ModelKind::mlp, false));
  EXPECT_EQ(text.rfind("stabfuzz-monitor-model 1\nmodel mlp\ndata digits\nprecision f32\n", 0), 0u);
  EXPECT_NE(error("").find("model file m.txt, line 1: truncated"), std::string::npos) << error("");
  EXPECT_NE(error("hello\n").find("not a stabfuzz monitor model"), std::string::npos);
  const std::string v2 = "stabfuzz-monitor-model 2" + text.substr(text.find('\n'));
  EXPECT_NE(error(v2).find("unsupported format '2'"), std::string::npos) << error(v2);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_NE(error(replaced("model mlp", "model rnn")).find("line 2: model must be mlp or cnn"),
            std::string::npos);
  EXPECT_NE(error(replaced("data digits", "data mnist")).find("line 3: data must be"),
            std::string::npos);
  EXPECT_NE(error(replaced("tensor w1 48", "tensor w1 47")).find("tensor w1 has 47 values"),
            std::string::npos)
      << error(replaced("tensor w1 48", "tensor w1 47"));
  const std::string half = text.substr(0, text.rfind('\n', text.size() / 2) + 1);
  EXPECT_NE(error(half).find("truncated (no 'end' line)"), std::string::npos) << error(half);
  EXPECT_NE(error(replaced("tensor b1", "tensor b7")).find("expected 'tensor b1 COUNT'"),
            std::string::npos);
  EXPECT_NE(error(replaced("\nend", "\nfin")).find("expected 'end'"), std::string::npos);
  // A value that is not a float in an f32 model.
  const size_t first = text.find('\n', text.find("tensor b2 ")) + 1;
  std::string notf32 = text;
  notf32.replace(first, text.find('\n', first) - first, "0x1.0000000001p-3");
  EXPECT_NE(error(notf32).find("is not a float in an f32 model"), std::string::npos)
      << error(notf32);
  EXPECT_THROW(read_model_file(testing::temp_dir("") + "/missing.txt"), InputError);
}

}  // namespace
}  // namespace stabfuzz::monitor
