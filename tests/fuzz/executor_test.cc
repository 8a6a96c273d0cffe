// One fuzz execution (harness/fuzz/executor.cc): the targets a --target selector names, bad
// selectors and dtypes refused, a planted bug's finding judged as every engine judges it, shrunk,
// and replayed from its corpus file.
#include "harness/fuzz/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness/corpus/replay.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::temp_dir;

#ifdef STABFUZZ_HAVE_LIBFUZZER

// --target takes a selector within one family: FAMILY/KIND or FAMILY/LIBRARY.
TEST(FuzzCli, FuzzesOneKindOrLibraryOfAFamily) {
  const auto r = run_stabfuzz(
      "fuzz --target softmax/reference --runs 50 --seed 1 --quiet "
      "--no-reports --out " +
      temp_dir("fuzz-reference"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\nsoftmax/cpu/stable "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("injected"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("library"), std::string::npos) << r.out;
}

#endif  // STABFUZZ_HAVE_LIBFUZZER

std::string error_of(const std::string& family, const std::string& impl,
                     const std::vector<DType>& dtypes) {
  try {
    fuzz::Executor(default_registry(), family, impl, dtypes, fuzz::Feedback::error, 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Executor, AFamilyMeansItsReferenceAndLibraryTargetsAndNamedBugsOnly) {
  const Registry& reg = default_registry();
  const fuzz::Executor all(reg, "softmax", "", {}, fuzz::Feedback::error, 1);
  EXPECT_EQ(all.family().name, "softmax");
  bool stable = false;
  for (const Target* t : all.targets()) {
    EXPECT_NE(t->kind, TargetKind::injected) << t->id;
    stable |= t->id == "softmax/cpu/stable";
  }
  EXPECT_TRUE(stable);
  EXPECT_FALSE(all.dtypes().empty());
  const fuzz::Executor one(reg, "softmax", "softmax/injected/no_max_subtract", {DType::f32},
                           fuzz::Feedback::error, 1);
  ASSERT_EQ(one.targets().size(), 1u);
  EXPECT_EQ(one.targets()[0]->id, "softmax/injected/no_max_subtract");
  EXPECT_EQ(one.dtypes(), std::vector<DType>{DType::f32});
  const fuzz::Executor bugs(reg, "softmax/injected", "", {}, fuzz::Feedback::error, 1);
  ASSERT_FALSE(bugs.targets().empty());
  for (const Target* t : bugs.targets()) EXPECT_EQ(t->kind, TargetKind::injected) << t->id;
}

TEST(Executor, BadSelectorsImplementationsAndDtypesAreRefused) {
  EXPECT_NE(error_of("softmax,var", "", {}).find("fuzz takes one family"), std::string::npos)
      << error_of("softmax,var", "", {});
  EXPECT_NE(
      error_of("softmax", "softmax/nosuch", {}).find("unknown implementation 'softmax/nosuch'"),
      std::string::npos)
      << error_of("softmax", "softmax/nosuch", {});
  EXPECT_NE(error_of("nosuch", "", {}), "");
  // A dtype no target of the family supports.
  const fuzz::Executor all(default_registry(), "softmax", "", {}, fuzz::Feedback::error, 1);
  for (DType d : kAllDTypes) {
    const auto& ds = all.dtypes();
    if (std::find(ds.begin(), ds.end(), d) != ds.end()) continue;
    EXPECT_NE(error_of("softmax", "", {d}).find("supports the requested dtype"), std::string::npos)
        << dtype_name(d);
  }
}

// Bytes that decode to a softmax input with 160 first: exp(160) overflows f32.
std::vector<uint8_t> overflowing_bytes() {
  auto b = fuzz::header_bytes(0, 0, 5);
  const float v = 160.0f;
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  b.insert(b.end(), {0, 0, 0});  // op 0 (raw bits) at position 0
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  return b;
}

// The planted bug fails where the stable target does not; the same bytes give the same verdict.
TEST(Executor, APlantedBugFailsOnItsInputAndItsShrunkInputReplays) {
  const Registry& reg = default_registry();
  const auto bytes = overflowing_bytes();
  const fuzz::Executor stable(reg, "softmax", "softmax/cpu/stable", {DType::f32},
                              fuzz::Feedback::error, 3);
  const fuzz::Execution s = stable.run(bytes.data(), bytes.size());
  ASSERT_TRUE(s.decoded.valid) << s.decoded.reject;
  ASSERT_EQ(s.verdicts.size(), 1u);
  EXPECT_FALSE(s.finding());

  const fuzz::Executor bug(reg, "softmax", "softmax/injected/no_max_subtract", {DType::f32},
                           fuzz::Feedback::error, 3);
  const fuzz::Execution ex = bug.run(bytes.data(), bytes.size());
  ASSERT_TRUE(ex.decoded.valid) << ex.decoded.reject;
  EXPECT_EQ(ex.decoded.input.args[0].values[0], 160.0);
  ASSERT_EQ(ex.verdicts.size(), 1u);
  ASSERT_TRUE(ex.finding());
  EXPECT_EQ(ex.verdicts[0].target->id, "softmax/injected/no_max_subtract");
  EXPECT_EQ(bug.run(bytes.data(), bytes.size()).verdicts[0].verdict.max_ratio,
            ex.verdicts[0].verdict.max_ratio);

  const Target& t = *ex.verdicts[0].target;
  const CestacRequest req = bug.request(t, DType::f32);
  EXPECT_EQ(req.seed, 3u);
  EXPECT_NE(req.stream, bug.request(t, DType::f64).stream);
  const fuzz::Executor::Shrunk small =
      bug.shrink(t, ex.decoded.input, ex.verdicts[0].verdict, 200, 10);
  EXPECT_TRUE(small.verdict.finding());
  EXPECT_LE(small.input.args[0].values.size(), ex.decoded.input.args[0].values.size());
  // Written as a corpus file with the executor's seed, it replays as detected.
  corpus::Entry e;
  e.family = "softmax";
  e.impl = t.id;
  e.input = small.input;
  e.expect = corpus::Expect::detected;
  e.seed = bug.seed();
  const corpus::ReplayOutcome r = corpus::check(reg, e, "shrunk.txt");
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
}  // namespace stabfuzz
