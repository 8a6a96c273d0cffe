// The monitor's trace (harness/monitor/trace.cc and trace.h): pollution is digits lost beyond what
// the inputs explain, a rare one is noise, and the names of phases, models, losses and sites.
#include "harness/monitor/trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/monitor/model.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

using S3 = Stoch<double, 3>;

// Eight values i / 3, so that some element's samples round apart (one alone agrees 1 time in 8).
std::vector<S3> thirds() {
  std::vector<S3> x;
  for (int i = 1; i <= 8; ++i) x.push_back(S3(double(i)) / S3(3.0));
  return x;
}
// (x + 1e8) - 1e8 of each: half the digits gone although y = x is perfectly conditioned.
std::vector<S3> absorbed(const std::vector<S3>& x) {
  std::vector<S3> y;
  for (const S3& v : x) y.push_back((v + S3(1e8)) - S3(1e8));
  return y;
}

// One polluted element among a hundred thousand an operation wrote is the digit estimate's own
// noise (kMinPollutedRate): counted in the step's stats, never named.
TEST(TraceTest, ARarePollutionIsNotNamed) {
  cestac::Run run(5, 0);
  const std::vector<S3> x = thirds(), y = absorbed(x);
  Trace tr(2, true);
  const Errors ex = tr.errors(x.data(), x.size());
  auto explained = [&](size_t i) { return Explained{ex[i % ex.size()], ex[i % ex.size()]}; };
  tr.op("layer", Phase::forward, "absorbed", STABFUZZ_MONITOR_SITE, y.data(), y.size(), explained);
  ASSERT_GE(tr.stats().at(0).polluted, 1);
  ASSERT_TRUE(tr.polluting().has_value());  // 1 or more of 8: named
  const std::vector<S3> exact(100000, S3(1.0));
  tr.op("layer", Phase::forward, "absorbed", STABFUZZ_MONITOR_SITE, exact.data(), exact.size(),
        explained);
  EXPECT_FALSE(tr.polluting().has_value());  // at most 8 of 100,008: not
}

// The pollution criterion: digits lost beyond what the inputs' errors explain. (x + 1e8) - 1e8
// returns x with half its digits gone although the operation y = x is perfectly conditioned;
// a - 1e8 for an a that already carries 1e8's rounding error loses as many digits, explained.
TEST(TraceTest, PollutionIsDigitsLostBeyondWhatInputsExplain) {
  using S = S3;
  cestac::Run run(5, 0);
  const S big(1e8);
  const std::vector<S> x = thirds();
  {
    Trace tr(2, true);
    const Errors ex = tr.errors(x.data(), x.size());
    const std::vector<S> y = absorbed(x);
    tr.op("layer", Phase::forward, "absorbed", STABFUZZ_MONITOR_SITE, y.data(), y.size(),
          [&](size_t i) {
            return Explained{ex[i], ex[i]};
          });
    ASSERT_TRUE(tr.polluting().has_value());
    EXPECT_EQ(tr.polluting()->op, "absorbed");
    EXPECT_LT(tr.polluting()->out_digits, 11);
    EXPECT_GT(tr.polluting()->explained_digits, 15);
    EXPECT_GE(tr.stats().at(0).polluted, 1);
    EXPECT_LT(tr.stats().at(0).min, 11);
  }
  {
    Trace tr(2, true);
    std::vector<S> a, d;
    for (const S& v : x) a.push_back(v + big);
    const Errors ea = tr.errors(a.data(), a.size());
    for (const S& v : a) d.push_back(v - big);
    tr.op(
        "layer", Phase::forward, "explained", STABFUZZ_MONITOR_SITE, d.data(), d.size(),
        [&](size_t i) { return Propagated{}.add(std::fabs(a[i].mean()), ea[i]).rel(d[i].mean()); });
    EXPECT_LT(tr.stats().at(0).min, 11);
    EXPECT_FALSE(tr.polluting().has_value());
  }
}

// The enums' names and parsers, and a site as file:line without the leading ./.
TEST(TraceTest, NamesParseBackAndSitesDropDotSlash) {
  EXPECT_STREQ(phase_name(Phase::forward), "forward");
  EXPECT_STREQ(phase_name(Phase::backward), "backward");
  EXPECT_STREQ(phase_name(Phase::update), "update");
  for (const auto k : {ModelKind::mlp, ModelKind::cnn}) EXPECT_EQ(parse_model(model_name(k)), k);
  for (const auto k : {LossKind::ce, LossKind::mse, LossKind::ce_naive})
    EXPECT_EQ(parse_loss(loss_name(k)), k);
  try {
    parse_model("rnn");
    ADD_FAILURE() << "rnn accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown model 'rnn' (mlp, cnn)");
  }
  try {
    parse_loss("hinge");
    ADD_FAILURE() << "hinge accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown loss 'hinge' (ce, mse, ce-naive)");
  }
  cestac::Run run(5, 0);
  const std::vector<S3> x = thirds();
  Trace tr(2, true);
  const Errors ex = tr.errors(x.data(), x.size());
  auto explained = [&](size_t i) { return Explained{ex[i], ex[i]}; };
  tr.op("layer", Phase::backward, "copy", Site{"././harness/monitor/model.h", 12}, x.data(),
        x.size(), explained);
  tr.op("layer", Phase::update, "copy", Site{"/abs/x.h", 3}, x.data(), x.size(), explained);
  ASSERT_EQ(tr.stats().size(), 2u);
  EXPECT_EQ(tr.stats()[0].site, "harness/monitor/model.h:12");
  EXPECT_EQ(tr.stats()[0].phase, Phase::backward);
  EXPECT_EQ(tr.stats()[1].site, "/abs/x.h:3");
}

}  // namespace
}  // namespace stabfuzz::monitor
