// Records (harness/pipeline/record.cc): a finding and a pair's result as the JSON of findings.jsonl
// and summary.json, whether a pair fails the run, and the recorder that writes and keeps them.
#include "harness/pipeline/record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "tests/support/run_binary.h"
#include "tests/support/toy_family.h"

namespace stabfuzz {
namespace {

using pipeline::ImplResult;

ImplResult result(TargetKind kind) {
  ImplResult r;
  r.family = "toy";
  r.impl = "toy/cpu/ref";
  r.kind = kind;
  r.dtype = DType::f32;
  r.inputs = 10;
  return r;
}

void fail(ImplResult& r, FindingKind k, int64_t n) {
  r.failing_by_kind[static_cast<size_t>(k)] += n;
  r.failing_inputs += n;
}

TEST(ImplResult, AReferenceFailsOnAKindOfFailOnOnly) {
  ImplResult r = result(TargetKind::reference);
  EXPECT_FALSE(r.fails(KindSet::defaults()));
  fail(r, FindingKind::underflow, 2);
  EXPECT_EQ(r.failing(FindingKind::underflow), 2);
  EXPECT_FALSE(r.fails(KindSet::defaults()));  // underflow is a policy, not in the defaults
  EXPECT_TRUE(r.fails(KindSet::all()));
  fail(r, FindingKind::nan, 1);
  EXPECT_TRUE(r.fails(KindSet::defaults()));
  EXPECT_FALSE(r.fails(KindSet::parse("none")));
}

TEST(ImplResult, AnInjectedTargetFailsWhenNothingFired) {
  ImplResult r = result(TargetKind::injected);
  EXPECT_TRUE(r.fails(KindSet::defaults()));
  fail(r, FindingKind::underflow, 1);
  EXPECT_FALSE(r.fails(KindSet::defaults()));
  EXPECT_FALSE(r.fails(KindSet::parse("none")));
}

TEST(ImplResultJson, FieldsAndTheRunsDecision) {
  ImplResult r = result(TargetKind::library);
  fail(r, FindingKind::overflow, 3);
  r.findings = 2;
  r.max_ulp = 12.5;
  r.regime_inputs["small"] = 4;
  const json::Value j = pipeline::impl_result_json(r, KindSet::defaults());
  EXPECT_EQ(j.at("family").as_string(), "toy");
  EXPECT_EQ(j.at("impl_kind").as_string(), "library");
  EXPECT_EQ(j.at("dtype").as_string(), "f32");
  EXPECT_EQ(j.at("inputs").as_number(), 10);
  EXPECT_EQ(j.at("failing_inputs").as_number(), 3);
  EXPECT_EQ(j.at("findings").as_number(), 2);
  EXPECT_EQ(j.at("max_ulp").as_number(), 12.5);
  EXPECT_TRUE(j.at("min_digits").is_null());  // no CESTAC
  EXPECT_EQ(j.at("inputs_per_regime").at("small").as_number(), 4);
  ASSERT_EQ(j.at("failing_by_kind").as_object().size(), 1u);  // only kinds with failing inputs
  EXPECT_EQ(j.at("failing_by_kind").at("overflow").as_number(), 3);
  EXPECT_TRUE(j.at("failed").as_bool());
  EXPECT_FALSE(pipeline::impl_result_json(r, KindSet::parse("nan")).at("failed").as_bool());
  EXPECT_EQ(j.get("blackbox"), nullptr);
  r.has_cestac = true;
  r.min_digits = 9.5;
  EXPECT_EQ(pipeline::impl_result_json(r, KindSet::defaults()).at("min_digits").as_number(), 9.5);
}

TEST(SetInputJson, ShapesHexValuesAndParams) {
  Input in = regime::row_input(DType::f64, {1.5, -0.0, INFINITY});
  in.set_param("eps", 1e-5);
  json::Value j;
  pipeline::set_input_json(j, in);
  const auto& args = j.at("input").as_array();
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].at("shape").as_array().size(), 1u);
  EXPECT_EQ(args[0].at("shape").as_array()[0].as_number(), 3);
  const auto& v = args[0].at("values").as_array();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].as_string(), "0x1.8p+0");
  EXPECT_EQ(v[1].as_string(), "-0x0p+0");
  EXPECT_EQ(v[2].as_string(), "inf");
  EXPECT_EQ(j.at("params").at("eps").as_number(), 1e-5);
  json::Value none;
  pipeline::set_input_json(none, regime::row_input(DType::f64, {1.0}));
  EXPECT_TRUE(none.at("params").is_object());  // an empty object, not null
}

// The identity family whose target `toy/injected/off` is 1% off.
Family off_family() {
  Family f = testing::toy_family("toy");
  f.oracle = [](const Input& in) {
    OracleResult o;
    o.exact = in.args.at(0).values;
    o.cond.assign(o.exact.size(), 1.0);
    return o;
  };
  Target off = testing::toy_target("toy/injected/off");
  off.kind = TargetKind::injected;
  off.native = [](const Input& in) {
    std::vector<double> out = in.args.at(0).values;
    for (double& v : out) v *= 1.01;
    return out;
  };
  off.injection = Injection{};
  off.injection->plants = "a 1% error";
  off.injection->fails_where = "everywhere";
  off.injection->fix = "do not scale";
  f.targets.push_back(off);
  return f;
}

TEST(CaseJson, NamesTheCaseAndHowItWasFound) {
  const Family f = off_family();
  const pipeline::CaseKey key{"toy", "toy/injected/off", DType::f32, 7, 12};
  const json::Value j = pipeline::case_json(f, f.targets[1], key, "fuzz", "any");
  EXPECT_EQ(j.at("target").as_string(), "toy");
  EXPECT_EQ(j.at("impl").as_string(), "toy/injected/off");
  EXPECT_EQ(j.at("impl_kind").as_string(), "injected");
  EXPECT_EQ(j.at("dtype").as_string(), "f32");
  EXPECT_EQ(j.at("seed").as_number(), 7);
  EXPECT_EQ(j.at("case").as_number(), 12);
  EXPECT_EQ(j.at("engine").as_string(), "fuzz");
  EXPECT_EQ(j.at("regime").as_string(), "any");
}

TEST(FindingJson, TheVerdictTheInputAndThePlantedBug) {
  const Family f = off_family();
  const Target& t = f.targets[1];
  const Input in = regime::row_input(DType::f64, {2.0, 4.0});
  const Verdict v = pipeline::evaluate(f, t, in, CestacRequest{});
  ASSERT_TRUE(v.finding());
  const pipeline::CaseKey key{"toy", t.id, DType::f64, 1, 3};
  const json::Value j =
      pipeline::finding_json(f, t, key, "any", in, v, 8, 5, "run", "stabfuzz --impl toy/x");
  EXPECT_EQ(j.at("impl").as_string(), t.id);
  EXPECT_EQ(j.at("kind").as_string(), "accuracy");
  EXPECT_EQ(j.at("severity").as_string(), std::string(severity_name(v.severity())));
  EXPECT_EQ(j.at("max_ulp").as_number(), v.max_ulp);
  EXPECT_EQ(j.at("computed").as_string(), reports::hex_float(v.computed));
  EXPECT_EQ(j.at("exact").as_string(), reports::hex_float(v.exact));
  EXPECT_EQ(j.at("n").as_number(), 2);
  EXPECT_EQ(j.at("original_n").as_number(), 8);
  EXPECT_EQ(j.at("shrink_steps").as_number(), 5);
  EXPECT_EQ(j.at("input").as_array().size(), 1u);
  EXPECT_EQ(j.at("plants").as_string(), "a 1% error");
  EXPECT_EQ(j.at("fails_where").as_string(), "everywhere");
  EXPECT_EQ(j.at("suggested_fix").as_string(), "do not scale");
  EXPECT_EQ(j.at("replay").as_string(), "stabfuzz --impl toy/x");
  EXPECT_EQ(j.get("digits"), nullptr);  // no CESTAC fields without CESTAC
  EXPECT_EQ(j.get("kind_detail"), nullptr);
  // A reference target: no planted-bug fields.
  const json::Value r = pipeline::finding_json(f, f.targets[0], key, "any", in, v, 2, 0, "run", "");
  EXPECT_EQ(r.get("plants"), nullptr);
}

TEST(Recorder, WritesFindingsAsFoundAndKeepsThemAsRead) {
  const std::string dir = testing::temp_dir("record");
  std::filesystem::create_directories(dir);
  {
    pipeline::Recorder rec(dir);
    EXPECT_EQ(rec.findings_path(), dir + "/findings.jsonl");
    EXPECT_EQ(rec.summary_path(), dir + "/summary.json");
    const Family f = off_family();
    const Input in = regime::row_input(DType::f64, {2.0});
    const Verdict v = pipeline::evaluate(f, f.targets[1], in, CestacRequest{});
    for (int64_t i = 0; i < 2; ++i) {
      const pipeline::CaseKey key{"toy", "toy/injected/off", DType::f64, 1, i};
      rec.finding(pipeline::finding_json(f, f.targets[1], key, "any", in, v, 1, 0, "run", "r"));
    }
    // Flushed as found: the file holds both lines while the recorder is open.
    EXPECT_EQ(testing::count_lines(testing::slurp(rec.findings_path())), 2);
    ASSERT_EQ(rec.run().findings.size(), 2u);
    EXPECT_EQ(rec.run().findings[1].line, 2);
    EXPECT_EQ(rec.run().findings[1].case_index, 1);
    EXPECT_EQ(rec.run().findings[0].impl, "toy/injected/off");
    EXPECT_EQ(rec.run().dir, dir);

    json::Value s;
    s.set("target", "toy");
    s.set("seed", 1);
    s.set("seconds", 0.5);
    ImplResult r = result(TargetKind::injected);
    fail(r, FindingKind::accuracy, 2);
    s.set("results", json::Array{pipeline::impl_result_json(r, KindSet::defaults())});
    rec.summary(s);
    rec.summary(s);  // a second summary replaces the first
    ASSERT_EQ(rec.run().results.size(), 1u);
    EXPECT_EQ(rec.run().results[0].failing_inputs, 2);
    EXPECT_FALSE(rec.run().results[0].failed());
    EXPECT_EQ(json::parse(testing::slurp(rec.summary_path())).at("target").as_string(), "toy");
  }
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

}  // namespace
}  // namespace stabfuzz
