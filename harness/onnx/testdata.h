// ONNX's own backend tests (libonnx-testdata: test_*/model.onnx with test_data_set_N/input_K.pb
// and output_K.pb) as ground truth for the interpreter: every test whose operators it supports,
// run natively and under CESTAC (the samples' mean), against the reference outputs within ONNX's
// backend-test tolerances.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace stabfuzz::onnx {

inline constexpr double kTestRtol = 1e-3, kTestAtol = 1e-7;

struct TestdataCase {
  std::string name;    // the test folder's name
  std::string status;  // pass, fail, skip
  std::string reason;  // fail: the first mismatch; skip: the unsupported operator or variant
  std::vector<std::string> ops;
};

struct TestdataReport {
  std::vector<std::string> roots;
  std::vector<TestdataCase> cases;
  int run = 0, passed = 0, failed = 0, skipped = 0;
};

// Every test_* folder under each root (e.g. libonnx-testdata's data/node, data/simple,
// data/pytorch-operator, data/pytorch-converted).
TestdataReport run_testdata(const std::vector<std::string>& roots);

// The summary and, per operator, the tests run, passed and skipped (a test counts for each
// operator it uses), then the failures and the reasons for skipping.
std::string testdata_markdown(const TestdataReport& r);

}  // namespace stabfuzz::onnx
