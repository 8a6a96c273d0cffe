// `monitor train --model M.onnx`'s data (harness/onnx/train_command.cc): rows and labels from NumPy
// files, every fifth row to the test set, and files that cannot be rows and labels.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/npy.h"
#include "harness/onnx/train.h"
#include "stabfuzz/errors.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
using onnx::Elem;
using onnx::HostTensor;

// Ten rows of 2 x 3 values (row r holds 10 r .. 10 r + 5) and their labels r % 3.
std::string write_rows(const std::string& dir) {
  HostTensor x{Elem::float32, {10, 2, 3}, {}};
  HostTensor y{Elem::int64, {10}, {}};
  for (int r = 0; r < 10; ++r) {
    for (int k = 0; k < 6; ++k) x.values.push_back(10 * r + k);
    y.values.push_back(r % 3);
  }
  onnx::write_npy(dir + "/x.npy", x);
  onnx::write_npy(dir + "/y.npy", y);
  return dir;
}

TEST(OnnxTrainCommand, NumpyRowsSplitEveryFifthRowToTheTestSet) {
  const std::string dir = write_rows(temp_dir(""));
  const monitor::Split s = onnx::load_npy_split(dir + "/x.npy", dir + "/y.npy");
  EXPECT_EQ(s.train.name, "x");
  EXPECT_EQ(s.train.features(), 6);
  EXPECT_EQ(s.train.classes, 3);
  EXPECT_EQ(s.train.y, (std::vector<int>{0, 1, 2, 0, 2, 0, 1, 2}));  // rows 0-3, 5-8
  EXPECT_EQ(s.test.y, (std::vector<int>{1, 0}));                     // rows 4, 9
  ASSERT_EQ(s.train.x.size(), 48u);
  EXPECT_EQ(s.train.x[24], 50);  // row 5's first value
  ASSERT_EQ(s.test.x.size(), 12u);
  EXPECT_EQ(s.test.x[0], 40);
  EXPECT_EQ(s.test.x[11], 95);
}

TEST(OnnxTrainCommand, LabelsThatDoNotMatchTheRowsAreOneClearError) {
  const std::string dir = write_rows(temp_dir(""));
  auto error = [&](const HostTensor& y) -> std::string {
    onnx::write_npy(dir + "/bad.npy", y);
    try {
      onnx::load_npy_split(dir + "/x.npy", dir + "/bad.npy");
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(error(HostTensor{Elem::int64, {3}, {0, 1, 2}}).find("must be 10 integers"),
            std::string::npos);
  EXPECT_NE(error(HostTensor{Elem::float32, {10}, std::vector<double>(10, 1)})
                .find("must be 10 integers"),
            std::string::npos);
  EXPECT_NE(error(HostTensor{Elem::int64, {10}, {0, 1, 2, 0, 1, -1, 0, 1, 2, 0}})
                .find("label -1 out of range"),
            std::string::npos);
  onnx::write_npy(dir + "/scalar.npy", HostTensor{Elem::float32, {}, {1}});
  EXPECT_THROW(onnx::load_npy_split(dir + "/scalar.npy", dir + "/y.npy"), InputError);
  EXPECT_THROW(onnx::load_npy_split(dir + "/missing.npy", dir + "/y.npy"), InputError);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
