// CSV and JSON of a monitored training run.
#include "harness/monitor/output.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace

json::Value pollution_json(const Pollution& p) {
  json::Value j;
  j.set("step", p.step);
  j.set("layer", p.layer);
  j.set("phase", phase_name(p.phase));
  j.set("op", p.op);
  j.set("site", p.site);
  j.set("element", p.index);
  j.set("value", p.value);
  j.set("out_digits", p.out_digits);
  j.set("explained_digits", p.explained_digits);
  return j;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}

double std_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

json::Value train_json(const TrainResult& r) {
  const TrainConfig& c = r.config;
  json::Value j;
  json::Value cfg;
  cfg.set("model", model_name(c.spec.kind));
  cfg.set("data", r.data);
  cfg.set("loss", loss_name(c.loss));
  cfg.set("precision", c.f64 ? "f64" : "f32");
  cfg.set("lr", c.lr);
  cfg.set("momentum", c.momentum);
  cfg.set("k", c.k);
  cfg.set("steps", c.steps);
  cfg.set("batch", c.batch);
  cfg.set("seed", c.seed);
  cfg.set("sharpness_every", c.sharpness_every);
  cfg.set("delta", c.delta);
  j.set("config", std::move(cfg));
  json::Value s;
  const StepRecord& last = r.steps.back();
  s.set("final_loss", last.loss);
  s.set("diverged_at_step", r.diverged_at >= 0 ? json::Value(r.diverged_at) : json::Value());
  s.set("final_loss_digits", last.loss_digits);
  s.set("final_weight_digits_min", last.weight_digits_min);
  s.set("final_weight_digits_mean", last.weight_digits_mean);
  s.set("final_rel_l1", last.rel_l1);
  json::Array acc;
  for (double a : r.test_accuracy) acc.emplace_back(a);
  s.set("test_accuracy_per_sample", std::move(acc));
  s.set("lambda0", r.lambda0);
  s.set("lambda_max", r.lambda_max);
  s.set("lr_lambda0", c.lr * r.lambda0);
  s.set("seconds", r.seconds);
  s.set("polluting", r.polluting ? pollution_json(*r.polluting) : json::Value());
  json::Array sites;
  for (const auto& site : r.sites) {
    json::Value js;
    js.set("kind", site.kind);
    js.set("site", site.site);
    js.set("count", site.count);
    sites.push_back(std::move(js));
  }
  s.set("instability_sites", std::move(sites));
  j.set("summary", std::move(s));
  json::Array steps;
  for (const auto& st : r.steps) {
    json::Value js;
    js.set("step", st.step);
    js.set("loss", st.loss);
    js.set("loss_digits", st.loss_digits);
    js.set("rel_l1", st.rel_l1);
    js.set("weight_digits_min", st.weight_digits_min);
    js.set("weight_digits_mean", st.weight_digits_mean);
    if (!std::isnan(st.lambda)) js.set("lambda", st.lambda);
    json::Value inst;
    for (int k = 0; k < cestac::kKindCount; ++k)
      if (st.instabilities[k])
        inst.set(std::string(cestac::kind_name(static_cast<cestac::Kind>(k))), st.instabilities[k]);
    js.set("instabilities", inst.is_null() ? json::Value(json::Object{}) : inst);
    steps.push_back(std::move(js));
  }
  j.set("steps", std::move(steps));
  return j;
}

std::string steps_csv(const TrainResult& r) {
  std::ostringstream os;
  os << "step,loss,loss_digits,rel_l1,weight_digits_min,weight_digits_mean,lambda,lr_lambda";
  for (int k = 0; k < cestac::kKindCount; ++k)
    os << ',' << cestac::kind_name(static_cast<cestac::Kind>(k));
  os << '\n';
  for (const auto& s : r.steps) {
    os << s.step << ',' << num(s.loss) << ',' << num(s.loss_digits) << ',' << num(s.rel_l1) << ','
       << num(s.weight_digits_min) << ',' << num(s.weight_digits_mean) << ',' << num(s.lambda)
       << ',' << num(s.lambda * r.config.lr);
    for (auto c : s.instabilities) os << ',' << c;
    os << '\n';
  }
  return os.str();
}

std::string ops_csv(const TrainResult& r) { return ops_csv(r.ops); }

std::string ops_csv(const std::vector<OpStats>& ops) {
  std::ostringstream os;
  os << "step,layer,phase,op,site,elements,digits_min,digits_p10,digits_mean,polluted\n";
  for (const auto& o : ops)
    os << o.step << ',' << o.layer << ',' << phase_name(o.phase) << ',' << o.op << ',' << o.site
       << ',' << o.elements << ',' << num(o.min) << ',' << num(o.p10) << ',' << num(o.mean) << ','
       << o.polluted << '\n';
  return os.str();
}

void write_train_outputs(const TrainResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create output directory " + dir + ": " + ec.message());
  reports::write_text_atomically(dir + "/steps.csv", steps_csv(r));
  reports::write_text_atomically(dir + "/ops.csv", ops_csv(r));
  reports::write_json_atomically(dir + "/monitor.json", train_json(r));
  reports::write_text_atomically(dir + "/report.html", render_train_html(r));
}

}  // namespace stabfuzz::monitor
