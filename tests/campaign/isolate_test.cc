// The fork server: results identical to an in-process run, crash / timeout / exception outcomes,
// a fresh child after each, and the run loop writing them as findings and going on.
#include "harness/campaign/isolate.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "families/all_families.h"
#include "harness/campaign/runner.h"
#include "harness/pipeline/evaluate.h"
#include "reports/json.h"
#include "reports/run_data.h"
#include "tests/support/asan.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

#ifdef STABFUZZ_TEST_ASAN
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

Input row(std::vector<double> v) {
  Input in;
  in.dtype = DType::f64;
  in.args.push_back(Tensor{{static_cast<int64_t>(v.size())}, std::move(v)});
  return in;
}

// A target that misbehaves on chosen first values: 1 crashes, 2 hangs, 3 throws, 4 calls exit(),
// 5 writes on stdout (through stdio and std::cout), else copies.
Target misbehaving() {
  Target t;
  t.id = "softmax/test/misbehaving";
  t.kind = TargetKind::library;
  t.dtypes = {DType::f64};
  t.isolated = true;
  t.native = [](const Input& in) {
    const double first = in.args.at(0).values.at(0);
    if (first == 1) std::raise(SIGSEGV);
    if (first == 2)
      for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (first == 3) throw std::runtime_error("refused");
    if (first == 4) std::exit(3);
    if (first == 5) {
      std::printf("debug: first=%g\n", first);
      std::cout << "and more" << std::endl;
    }
    return in.args[0].values;
  };
  return t;
}

TEST(Isolate, CrashTimeoutAndExceptionAreOutcomesAndTheServerRestarts) {
  const Target t = misbehaving();
  campaign::Isolator iso(t, 300);
  auto a = iso.run(row({0.5, 0.25}), nullptr);
  EXPECT_EQ(a.failure, campaign::Failure::none);
  EXPECT_EQ(a.native, (std::vector<double>{0.5, 0.25}));

  a = iso.run(row({1, 0}), nullptr);
  EXPECT_EQ(a.failure, campaign::Failure::crash);
  // Under ASan the child reports the SEGV, then exits 1 or (abort_on_error=1) dies of SIGABRT.
  EXPECT_TRUE(a.detail.rfind("signal SIG", 0) == 0 || a.detail.rfind("exited with status", 0) == 0)
      << a.detail;
  if (!kAsan) EXPECT_EQ(a.detail, "signal SIGSEGV (Segmentation fault)");

  const auto t0 = std::chrono::steady_clock::now();
  a = iso.run(row({2, 0}), nullptr);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(a.failure, campaign::Failure::timeout);
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 5.0);

  a = iso.run(row({3, 0}), nullptr);
  EXPECT_EQ(a.failure, campaign::Failure::exception);
  EXPECT_EQ(a.detail, "refused");

  a = iso.run(row({6, 5}), nullptr);  // a fresh child after the crash and the timeout
  EXPECT_EQ(a.failure, campaign::Failure::none);
  EXPECT_EQ(a.native, (std::vector<double>{6, 5}));
  EXPECT_EQ(iso.restarts(), 2);

  a = iso.run(row({4, 0}), nullptr);  // exit() in the call: the child ended, a crash
  EXPECT_EQ(a.failure, campaign::Failure::crash);
  EXPECT_EQ(a.detail, "exited with status 3");

  // Output on stdout: a finding of its own, the bytes named; the child lives on, the next call's
  // stdout starts empty.
  a = iso.run(row({5, 0}), nullptr);
  EXPECT_EQ(a.failure, campaign::Failure::stdout_write);
  EXPECT_EQ(a.detail, "wrote 24 bytes to stdout: \"debug: first=5.and more.\"");
  EXPECT_EQ(campaign::failure_name(a.failure), "stdout");
  a = iso.run(row({6, 7}), nullptr);
  EXPECT_EQ(a.failure, campaign::Failure::none);
  EXPECT_EQ(a.native, (std::vector<double>{6, 7}));
  EXPECT_EQ(iso.restarts(), 3);
}

// The CESTAC run in the child comes back whole: outputs, digits and the instability log with its
// sites, bit for bit what the same run gives in this process.
TEST(Isolate, CestacRunsInTheChildComeBackIdentical) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  const auto [fam, naive] = default_registry().find_target("softmax/injected/no_max_subtract");
  ASSERT_NE(naive, nullptr);
  Input in = row({800, 700, 1, -3});
  CestacRequest req;
  req.seed = 7;
  req.stream = 11;
  const CestacOutput direct = naive->cestac(in, req);
  ASSERT_GT(direct.log.total(), 0u);
  campaign::Isolator iso(*naive, 5000);
  const auto a = iso.run(in, &req);
  ASSERT_EQ(a.failure, campaign::Failure::none) << a.detail;
  ASSERT_TRUE(a.has_cestac);
  EXPECT_EQ(a.cestac.digits, direct.digits);
  EXPECT_EQ(a.cestac.noisy, direct.noisy);
  EXPECT_EQ(a.cestac.log.counts, direct.log.counts);
  ASSERT_EQ(a.cestac.log.sites.size(), direct.log.sites.size());
  for (size_t i = 0; i < direct.log.sites.size(); ++i) {
    EXPECT_EQ(a.cestac.log.sites[i].address, direct.log.sites[i].address);
    EXPECT_EQ(a.cestac.log.sites[i].count, direct.log.sites[i].count);
  }
  const auto o = campaign::evaluate_outcome(*f, *naive, in, req, &iso);
  EXPECT_TRUE(o.finding());
  EXPECT_EQ(o.verdict.max_ulp, pipeline::evaluate(*f, *naive, in, req).max_ulp);
}

// The run loop: crash, exit, stdout and timeout findings in findings.jsonl, the campaign completes.
TEST(Isolate, TheRunLoopRecordsFailuresAndGoesOn) {
  Registry reg;
  Family f = families::softmax_family();
  f.targets.resize(1);
  Target t = misbehaving();
  // Misbehaves on long rows: crash above 2000 values, hang between 1000 and 2000; on some shorter
  // rows it calls exit() or writes on stdout.
  t.native = [](const Input& in) {
    const size_t n = in.args.at(0).values.size();
    if (n > 2000) std::raise(SIGSEGV);
    if (n > 1000)
      for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (n % 4 == 1) std::exit(0);
    if (n % 4 == 2) std::puts("row");
    const Family* fam = default_registry().find_family("softmax");
    return fam->targets.front().native(in);
  };
  f.targets.push_back(t);
  reg.add(std::move(f));
  campaign::RunOptions o;
  o.family = "softmax";
  o.impl = "softmax/test/misbehaving";
  o.runs = 30;
  o.seed = 3;
  o.max_findings = 30;
  o.shrink_evals = 10;
  o.timeout_ms = 200;
  o.out_dir = testing::temp_dir("isolate");
  o.write_reports = true;
  o.replay_command = [](const pipeline::CaseKey& k) {
    return "replay case " + std::to_string(k.index);
  };
  std::ostringstream progress;
  const auto res = campaign::run_family(reg, o, progress);
  ASSERT_EQ(res.results.size(), 1u);
  const auto& r = res.results[0];
  EXPECT_EQ(r.inputs, 30);
  EXPECT_GT(r.crashes, 0);
  EXPECT_GT(r.timeouts, 0);
  EXPECT_EQ(r.findings, r.crashes + r.timeouts);
  EXPECT_EQ(res.exit_code, 1);
  const reports::RunData run = reports::load_run(o.out_dir);
  EXPECT_TRUE(run.problems.empty());
  int crashes = 0, timeouts = 0, exits = 0, prints = 0;
  for (const auto& fd : run.findings) {
    crashes += fd.failure == "crash" || fd.failure == "stdout";
    timeouts += fd.failure == "timeout";
    exits += fd.failure_detail == "exited with status 0";
    prints += fd.failure == "stdout";
    if (fd.failure == "stdout") EXPECT_EQ(fd.failure_detail, "wrote 4 bytes to stdout: \"row.\"");
    EXPECT_FALSE(fd.input.empty());
    EXPECT_EQ(fd.replay, "replay case " + std::to_string(fd.case_index));
    EXPECT_EQ(fd.detectors, std::vector<std::string>{fd.failure});
  }
  EXPECT_EQ(crashes, r.crashes);
  EXPECT_EQ(timeouts, r.timeouts);
  EXPECT_GT(exits, 0);
  EXPECT_GT(prints, 0);
  const std::string md = testing::slurp(o.out_dir + "/report.md");
  EXPECT_NE(md.find("**crash**"), std::string::npos);
  EXPECT_NE(md.find("**timeout**: no result within 200 ms"), std::string::npos);
}

}  // namespace
}  // namespace stabfuzz
