// The library triage table (harness/triage/table.cc): rows from run directories with their
// smallest input and verdict, the verdicts file, the library a target's description names.
#include "harness/triage/table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

// The table: a real run's library finding, its verdict from the file, the counts.
TEST(TriageTable, RowsCarryTheSmallestInputAndTheVerdict) {
  if (!default_registry().find_target("softmax/onednn/softmax").second)
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "built without oneDNN");
  const std::string dir = testing::temp_dir("table-run");
  const auto r = testing::run_stabfuzz(
      "--target softmax --impl softmax/onednn/softmax --dtype f32 --seed 1 --case 124 --quiet "
      "--no-reports --out " +
      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string tsv = testing::temp_dir("") + "/verdicts.tsv";
  std::ofstream(tsv) << "# comment\nsoftmax/onednn/softmax\tf32\tunderflow\tpolicy\tFTZ\n";
  const std::string md =
      triage::library_table(default_registry(), {dir}, triage::read_verdicts(tsv), "cmd");
  EXPECT_NE(md.find("Regenerate: `cmd`"), std::string::npos) << md;
  EXPECT_NE(md.find("| `softmax/onednn/softmax` | f32 | underflow | 1 / 1 | 1 | [8, -80] |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| policy | FTZ |"), std::string::npos) << md;
  EXPECT_NE(md.find("1 policy"), std::string::npos) << md;
  EXPECT_EQ(md.find("untriaged"), std::string::npos) << md;
  std::ofstream(tsv) << "softmax/onednn/softmax\tf32\tpolicy\n";
  EXPECT_THROW(triage::read_verdicts(tsv), InputError);
}

// Comments and blank lines are skipped; `*` stays as written; a short line names its line number.
TEST(TriageTable, VerdictsFileSkipsCommentsAndNamesABadLine) {
  const std::string tsv = testing::temp_dir("") + "/verdicts.tsv";
  std::ofstream(tsv) << "# impl dtype kind verdict evidence\n\n"
                        "var/openblas/x\t*\t*\tdefect\tsee issue 7\n"
                        "softmax/onednn/softmax\tf32\tunderflow\tpolicy\tFTZ\n";
  const auto rows = triage::read_verdicts(tsv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].impl, "var/openblas/x");
  EXPECT_EQ(rows[0].dtype, "*");
  EXPECT_EQ(rows[0].kind, "*");
  EXPECT_EQ(rows[0].verdict, "defect");
  EXPECT_EQ(rows[0].evidence, "see issue 7");
  EXPECT_EQ(rows[1].kind, "underflow");
  EXPECT_EQ(rows[1].evidence, "FTZ");
  std::ofstream(tsv) << "# ok\nsoftmax/onednn/softmax\tf32\tunderflow\tpolicy\tFTZ\tmore\n";
  try {
    triage::read_verdicts(tsv);
    ADD_FAILURE() << "six fields accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(tsv + ":2: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(triage::read_verdicts(tsv + ".missing"), InputError);
}

TEST(TriageTable, LibraryOfNamesTheLibraryAndItsVersion) {
  Target t;
  t.description = "oneDNN 2.6.3 (cpu) softmax_forward";
  EXPECT_EQ(triage::library_of(t), "oneDNN 2.6.3");
  t.description = "OpenBLAS 0.3.21 cblas_sgemm";
  EXPECT_EQ(triage::library_of(t), "OpenBLAS 0.3.21");
  t.description = "libtorch 1.13.1 at::softmax";
  EXPECT_EQ(triage::library_of(t), "libtorch 1.13.1");
  t.description = "Intel(R) Math Kernel Library Version 2026.2-Product Build 2025 vsExp";
  EXPECT_EQ(triage::library_of(t), "Intel MKL 2026.2");
  t.description = "Eigen dense softmax";
  EXPECT_EQ(triage::library_of(t), "Eigen");
}

}  // namespace
}  // namespace stabfuzz
