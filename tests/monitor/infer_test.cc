// `stabfuzz monitor infer --model model.txt` (harness/monitor/infer.cc): the trained weights read
// back exactly, the outputs replayed from the seed, argmax flips on a tie, and corrupt model files.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::slurp;

// train writes the mean weights as model.txt; infer reads them back exactly: its round-to-nearest
// accuracy is the one train reported for them, its outputs replay from the seed, and a corrupt or
// missing model file is one error line.
TEST(MonitorCliTest, InferRoundTripsTheTrainedWeights) {
  const std::string train = testing::temp_dir("infer-train");
  const auto t = run_stabfuzz(
      "monitor train --model mlp --lr 0.5 --steps 20 --max-train 200 --sharpness-every 0 "
      "--seed 5 --out " +
      train);
  ASSERT_EQ(t.code, 0) << t.err;
  const std::string model = train + "/model.txt";
  const std::string text = slurp(model);
  ASSERT_EQ(text.rfind("stabfuzz-monitor-model 1\nmodel mlp\ndata digits\nprecision f32\n", 0), 0u)
      << text.substr(0, 200);
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    out[i] = testing::temp_dir("infer" + std::to_string(i));
    const auto r = run_stabfuzz("monitor infer --model " + model + " --seed 7 --out " + out[i]);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("argmax differs between samples:"), std::string::npos) << r.out;
  }
  const json::Value j = json::parse(slurp(out[0] + "/infer.json"));
  const json::Value& s = j.at("summary");
  // The stored weights are the evaluated ones, bit for bit: the same accuracy.
  EXPECT_EQ(s.at("accuracy_native").as_number(), s.at("train_reported_accuracy_mean").as_number());
  const std::string line = "test accuracy of the samples' mean weights (model.txt): ";
  const size_t at = t.out.find(line);
  ASSERT_NE(at, std::string::npos) << t.out;
  EXPECT_NEAR(std::stod(t.out.substr(at + line.size())), s.at("accuracy_native").as_number(),
              0.00005);
  EXPECT_EQ(s.at("test_rows").as_number(), 359);
  EXPECT_EQ(s.at("accuracy_per_sample").as_array().size(), 3u);
  const double dmin = s.at("logit_digits").at("min").as_number();
  EXPECT_GT(dmin, 0);
  EXPECT_LE(dmin, s.at("logit_digits").at("mean").as_number());
  EXPECT_EQ(static_cast<double>(j.at("flips").as_array().size()), s.at("argmax_flips").as_number());
  double rows = 0;
  for (const auto& b : j.at("margin_buckets").as_array()) rows += b.at("rows").as_number();
  EXPECT_EQ(rows, 359);
  ASSERT_EQ(j.at("layers").as_array().size(), 4u);  // fc1, tanh1, fc2, loss
  EXPECT_EQ(j.at("layers").as_array()[0].at("layer").as_string(), "fc1");
  EXPECT_EQ(testing::count_lines(slurp(out[0] + "/infer.csv")), 360);
  EXPECT_EQ(slurp(out[0] + "/infer.csv"), slurp(out[1] + "/infer.csv"));
  EXPECT_NE(slurp(out[0] + "/report.html").find("<svg"), std::string::npos);
  // f64 evaluation of the same (float) weights keeps more digits.
  const std::string o64 = testing::temp_dir("infer64");
  ASSERT_EQ(run_stabfuzz("monitor infer --precision f64 --model " + model + " --out " + o64).code,
            0);
  EXPECT_GT(json::parse(slurp(o64 + "/infer.json"))
                .at("summary")
                .at("logit_digits")
                .at("mean")
                .as_number(),
            s.at("logit_digits").at("mean").as_number() + 5);

  // Corrupt files: each is one error line, exit 2.
  const std::string bad = testing::temp_dir("infer-bad");
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(bad + "/" + name) << body;
    return bad + "/" + name;
  };
  const size_t w1 = text.find("tensor w1 ");
  const size_t first = text.find('\n', w1) + 1;
  std::string garbled = text;
  garbled.replace(first, text.find('\n', first) - first, "0x1.zzp-3");
  std::string wrong_count = text;
  wrong_count.replace(w1, 14, "tensor w1 2047");
  std::vector<std::string> files = {
      bad + "/missing.txt",
      write("empty.txt", ""),
      write("truncated.txt", text.substr(0, text.size() / 2)),
      write("garbled.txt", garbled),
      write("count.txt", wrong_count),
      write("version.txt", "stabfuzz-monitor-model 2\n" + text.substr(text.find('\n') + 1)),
      write("notf32.txt", text.substr(0, first) + "0x1.0000000001p-3\n" +
                              text.substr(text.find('\n', first) + 1))};
  for (const auto& f : files) {
    const auto r = run_stabfuzz("monitor infer --model " + f);
    EXPECT_EQ(r.code, 2) << f << ": " << r.out;
    EXPECT_EQ(r.err.rfind("stabfuzz: error: ", 0), 0u) << f << ": " << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << f << ": " << r.err;
  }
  const auto none = run_stabfuzz("monitor infer");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("--model FILE is required"), std::string::npos) << none.err;
}

// Classes 0 and 1 given identical weights tie in exact arithmetic: their logits differ only by
// rounding, so the CESTAC samples' argmaxes split between them on some rows, each such row listed
// with a margin that keeps no digit.
TEST(MonitorCliTest, InferListsArgmaxFlipsOnATie) {
  const std::string train = testing::temp_dir("tie-train");
  ASSERT_EQ(run_stabfuzz("monitor train --lr 0.5 --steps 5 --max-train 100 --sharpness-every 0 "
                         "--out " +
                         train)
                .code,
            0);
  std::vector<std::string> lines;
  {
    std::istringstream in(slurp(train + "/model.txt"));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  const int C = 10, H = 32;
  size_t w2 = 0, b2 = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("tensor w2 ", 0) == 0) w2 = i + 1;
    if (lines[i].rfind("tensor b2 ", 0) == 0) b2 = i + 1;
  }
  ASSERT_GT(w2, 0u);
  ASSERT_GT(b2, 0u);
  for (int k = 0; k < H; ++k) lines[w2 + size_t(k) * C + 1] = lines[w2 + size_t(k) * C];
  lines[b2 + 1] = lines[b2];
  for (int c = 2; c < C; ++c) lines[b2 + c] = "-0x1p+4";  // classes 0 and 1 lead every row
  const std::string model = train + "/tie.txt";
  {
    std::ofstream out(model);
    for (const auto& l : lines) out << l << '\n';
  }
  const std::string out = testing::temp_dir("tie");
  const auto r = run_stabfuzz("monitor infer --model " + model + " --seed 3 --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const json::Value j = json::parse(slurp(out + "/infer.json"));
  const auto& flips = j.at("flips").as_array();
  EXPECT_GT(flips.size(), 0u) << r.out;
  EXPECT_EQ(static_cast<double>(flips.size()), j.at("summary").at("argmax_flips").as_number());
  for (const auto& f : flips) {
    const auto& p = f.at("sample_predictions").as_array();
    bool differ = false;
    for (const auto& q : p) {
      EXPECT_LT(q.as_number(), 2);
      differ |= q.as_number() != p[0].as_number();
    }
    EXPECT_TRUE(differ);
    EXPECT_LT(f.at("margin_digits").as_number(), 1.5);
  }
}

}  // namespace
}  // namespace stabfuzz
