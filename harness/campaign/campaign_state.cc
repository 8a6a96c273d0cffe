// campaign.json (the checkpoint) and the campaign's joined summary.json.
#include "harness/campaign/campaign_state.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "harness/campaign/merge.h"
#include "harness/core/console.h"
#include "harness/core/duration.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {
namespace {

json::Value strings(const std::vector<std::string>& v) {
  json::Array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::vector<std::string> strings_of(const json::Value& v) {
  std::vector<std::string> out;
  for (const auto& s : v.as_array()) out.push_back(s.as_string());
  return out;
}

Engine engine_of(const std::string& s) {
  if (s == "property") return Engine::property;
  if (s == "fuzz") return Engine::fuzz;
  throw json::ParseError("unknown engine '" + s + "'");
}

}  // namespace

// A killed campaign may leave half a line at the end of findings.jsonl: cut it (its unit re-runs).
void cut_torn_tail(const std::string& path) {
  const std::string text = reports::read_text(path);
  if (text.empty() || text.back() == '\n') return;
  const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
    throw InputError("cannot repair " + path + ": " + std::strerror(errno));
}

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void save_state(const CampaignState& s, const std::string& out_dir) {
  json::Value j;
  j.set("version", s.version);
  j.set("seed", s.seed);
  j.set("targets", s.targets);
  j.set("shard", s.shard);
  j.set("baseline", s.baseline);
  j.set("time_s", s.time_s);
  j.set("runs", static_cast<long long>(s.runs));
  j.set("jobs", s.jobs);
  j.set("unit_flags", strings(s.unit_flags));
  j.set("elapsed_s", s.elapsed_s);
  j.set("finished", s.finished);
  j.set("impls", strings(s.impls));
  j.set("unavailable", strings(s.unavailable));
  json::Array rounds;
  for (const auto& r : s.rounds) {
    json::Value jr;
    jr.set("round", r.number);
    jr.set("engine", engine_name(r.engine));
    json::Array units;
    for (const auto& u : r.units) {
      json::Value ju;
      ju.set("impl", s.impls.at(u.item));
      ju.set("item", static_cast<long long>(u.item));
      ju.set("budget_s", u.budget_s);
      ju.set("seed", u.seed);
      ju.set("dir", u.dir);
      ju.set("status", u.status);
      if (!u.command.empty()) ju.set("command", u.command);
      if (u.status == "error") {
        ju.set("exit_code", u.exit_code);
        ju.set("problem", u.problem);
      }
      ju.set("findings", static_cast<long long>(u.findings));
      ju.set("new_findings", static_cast<long long>(u.new_findings));
      if (u.engine == Engine::fuzz) {
        ju.set("executions", static_cast<long long>(u.executions));
        ju.set("corpus_added", static_cast<long long>(u.corpus_added));
        ju.set("corpus_merged", u.corpus_merged);
      }
      ju.set("seconds", u.seconds);
      units.push_back(std::move(ju));
    }
    jr.set("units", std::move(units));
    rounds.push_back(std::move(jr));
  }
  j.set("rounds", std::move(rounds));
  reports::write_json_atomically(out_dir + "/campaign.json", j);
}

CampaignState load_state(const std::string& out_dir) {
  const std::string path = out_dir + "/campaign.json";
  const std::string text = reports::read_text(path);
  if (text.empty()) throw InputError(path + " is missing or empty");
  return parse_state(text, path);
}

CampaignState parse_state(const std::string& text, const std::string& path) {
  CampaignState s;
  try {
    const json::Value j = json::parse(text);
    s.version = json::integer<int>(j.at("version"));
    if (s.version != 1)
      throw json::ParseError("version " + std::to_string(s.version) + " is not 1");
    s.seed = json::integer<uint64_t>(j.at("seed"));
    s.targets = j.at("targets").as_string();
    s.shard = j.at("shard").as_string();
    s.baseline = j.at("baseline").as_string();
    s.time_s = j.at("time_s").as_number();
    s.runs = json::integer<int64_t>(j.at("runs"));
    s.jobs = json::integer<int>(j.at("jobs"));
    s.unit_flags = strings_of(j.at("unit_flags"));
    s.elapsed_s = j.at("elapsed_s").as_number();
    s.finished = j.at("finished").as_bool();
    s.impls = strings_of(j.at("impls"));
    s.unavailable = strings_of(j.at("unavailable"));
    for (const auto& jr : j.at("rounds").as_array()) {
      RoundRecord r;
      r.number = json::integer<int>(jr.at("round"));
      r.engine = engine_of(jr.at("engine").as_string());
      for (const auto& ju : jr.at("units").as_array()) {
        UnitRecord u;
        u.item = json::integer<size_t>(ju.at("item"));
        if (u.item >= s.impls.size() || ju.at("impl").as_string() != s.impls[u.item])
          throw json::ParseError("unit " + ju.at("dir").as_string() +
                                 " names another implementation");
        u.engine = r.engine;
        u.round = r.number;
        u.budget_s = ju.at("budget_s").as_number();
        u.seed = json::integer<uint64_t>(ju.at("seed"));
        u.dir = ju.at("dir").as_string();
        u.status = ju.at("status").as_string();
        if (const auto* c = ju.get("command")) u.command = c->as_string();
        if (const auto* c = ju.get("exit_code")) u.exit_code = json::integer<int>(*c);
        if (const auto* c = ju.get("problem")) u.problem = c->as_string();
        u.findings = json::integer<int64_t>(ju.at("findings"));
        u.new_findings = json::integer<int64_t>(ju.at("new_findings"));
        if (const auto* c = ju.get("executions")) u.executions = json::integer<int64_t>(*c);
        if (const auto* c = ju.get("corpus_added")) u.corpus_added = json::integer<int64_t>(*c);
        if (const auto* c = ju.get("corpus_merged")) u.corpus_merged = c->as_bool();
        u.seconds = ju.at("seconds").as_number();
        r.units.push_back(std::move(u));
      }
      s.rounds.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    throw InputError(path + ": not a stabfuzz campaign checkpoint: " + e.what());
  }
  return s;
}

namespace {

// The units' summary rows, joined, and how many inputs each engine ran.
struct UnitRows {
  RowMerger rows;
  std::map<std::string, int64_t> status_count;
  int64_t property_inputs = 0, fuzz_executions = 0;
};

UnitRows read_unit_rows(const CampaignState& s, const std::string& out_dir) {
  UnitRows out;
  for (const auto& r : s.rounds)
    for (const auto& u : r.units) {
      ++out.status_count[u.status];
      if (u.status == "pending" || u.status == "skipped" || u.status == "running") continue;
      const std::string text = reports::read_text(out_dir + "/" + u.dir + "/summary.json");
      if (text.empty()) continue;  // crashed before its summary: its findings and failure are kept
      try {
        const json::Value j = json::parse(text);
        for (const auto& row : j.at("results").as_array()) {
          out.rows.add(row);
          (u.engine == Engine::fuzz ? out.fuzz_executions : out.property_inputs) +=
              json::integer<int64_t>(row.at("inputs"));
        }
      } catch (const std::exception& e) {
        std::cerr << "stabfuzz campaign: " << out_dir << "/" << u.dir
                  << "/summary.json skipped: " << e.what() << "\n";
      }
    }
  return out;
}

// Crashed and hung units count as failing inputs of their implementation's first dtype; returns
// the findings per implementation x dtype.
std::map<std::string, int64_t> add_failure_rows(const std::vector<json::Value>& findings,
                                                RowMerger& rows, const KindSet& fail_on) {
  std::map<std::string, int64_t> per_pair;
  for (const auto& f : findings) {
    ++per_pair[pair_of(f)];
    const json::Value* failure = f.get("failure");
    const json::Value* det = f.get("detectors");
    if (!failure || !det || !det->is_string() || det->as_string() != "campaign") continue;
    json::Value row;
    row.set("family", f.at("target").as_string());
    row.set("impl", f.at("impl").as_string());
    row.set("impl_kind", impl_kind_of(f));
    row.set("dtype", f.at("dtype").as_string());
    const std::string kind = finding_kind_of(f);
    json::Value kinds{json::Object{}};
    kinds.set(kind, 1);
    row.set("failing_by_kind", std::move(kinds));
    const auto k = parse_finding_kind(kind);
    row.set("failed", impl_kind_of(f) != "injected" && (!k || fail_on.has(*k)));
    row.set("inputs", 0);
    row.set("failing_inputs", 1);
    row.set("findings", 0);
    row.set(failure->as_string() == "timeout" ? "timeouts" : "crashes", 1);
    row.set("units", 0);
    rows.add(row);
  }
  return per_pair;
}

// Rows in work-list order, then dtype order.
void sort_rows(json::Array& joined, const std::vector<std::string>& impls) {
  std::map<std::string, size_t> rank;
  for (size_t k = 0; k < impls.size(); ++k) rank[impls[k]] = k;
  std::stable_sort(joined.begin(), joined.end(), [&](const json::Value& a, const json::Value& b) {
    const size_t ra =
        rank.count(a.at("impl").as_string()) ? rank[a.at("impl").as_string()] : SIZE_MAX;
    const size_t rb =
        rank.count(b.at("impl").as_string()) ? rank[b.at("impl").as_string()] : SIZE_MAX;
    if (ra != rb) return ra < rb;
    return parse_dtype(a.at("dtype").as_string()).value_or(DType::f64) <
           parse_dtype(b.at("dtype").as_string()).value_or(DType::f64);
  });
}

// summary.json's "campaign" object: the configuration and what the run covered.
json::Value campaign_object(const CampaignState& s, const std::vector<WorkItem>& items,
                            const UnitRows& u, const json::Array& joined) {
  std::set<std::string> covered;
  for (const auto& r : joined) covered.insert(r.at("impl").as_string());
  json::Array not_covered;
  for (const auto& it : items)
    if (!covered.count(it.impl)) not_covered.emplace_back(it.impl);
  json::Value c;
  c.set("targets", s.targets);
  c.set("shard", s.shard);
  c.set("time_s", s.time_s);
  c.set("runs", static_cast<long long>(s.runs));
  c.set("jobs", s.jobs);
  c.set("rounds", static_cast<long long>(s.rounds.size()));
  json::Value units;
  for (const auto& [k, v] : u.status_count) units.set(k, static_cast<long long>(v));
  c.set("units", std::move(units));
  c.set("implementations", static_cast<long long>(items.size()));
  c.set("pairs", static_cast<long long>(joined.size()));
  c.set("property_inputs", static_cast<long long>(u.property_inputs));
  c.set("fuzz_executions", static_cast<long long>(u.fuzz_executions));
  c.set("not_covered", std::move(not_covered));
  json::Array unavailable;
  for (const auto& name : s.unavailable) unavailable.emplace_back(name);
  c.set("unavailable", std::move(unavailable));
  c.set("finished", s.finished);
  return c;
}

}  // namespace

CampaignSummary write_campaign_summary(const CampaignState& s, const std::vector<WorkItem>& items,
                                       const std::string& out_dir, const KindSet& fail_on) {
  UnitRows u = read_unit_rows(s, out_dir);
  const std::vector<json::Value> findings = read_findings(out_dir + "/findings.jsonl", nullptr);
  const std::map<std::string, int64_t> per_pair = add_failure_rows(findings, u.rows, fail_on);
  json::Array joined = u.rows.rows(&per_pair);
  sort_rows(joined, s.impls);
  CampaignSummary out;
  out.exit_code = findings_exit_code(findings, fail_on);
  json::Value j;
  j.set("target", "campaign");
  j.set("engine", "campaign");
  j.set("seed", s.seed);
  j.set("seconds", s.elapsed_s);
  j.set("campaign", campaign_object(s, items, u, joined));
  j.set("results", std::move(joined));
  j.set("exit_code", out.exit_code);
  j.set("fail_on", fail_on.str());
  reports::write_json_atomically(out_dir + "/summary.json", j);
  out.summary = std::move(j);
  return out;
}

void print_campaign_summary(const CampaignSummary& sum, const CampaignState& s,
                            const std::vector<WorkItem>& items, const std::string& out_dir,
                            std::ostream& out) {
  const json::Value& c = sum.summary.at("campaign");
  const auto& rows = sum.summary.at("results").as_array();
  // Each line wrapped at 100 columns, its continuation indented under it.
  std::ostringstream line;
  const auto put = [&](const std::string& head, size_t indent) {
    wrap(out, head, line.str(), indent);
    line.str("");
  };
  line << items.size() << " implementations, " << rows.size()
       << " implementation x dtype pairs covered";
  const auto& nc = c.at("not_covered").as_array();
  if (!nc.empty()) line << ", " << nc.size() << " implementations NOT covered (budget too small)";
  if (!s.unavailable.empty()) line << ", " << s.unavailable.size() << " unavailable here";
  put("campaign " + out_dir + ":", 2);
  line << "units:";
  for (const auto& [k, v] : c.at("units").as_object())
    line << " " << static_cast<long long>(v.as_number()) << " " << k << ",";
  line << " in " << s.rounds.size() << " rounds; "
       << static_cast<long long>(c.at("property_inputs").as_number()) << " property inputs, "
       << static_cast<long long>(c.at("fuzz_executions").as_number()) << " fuzz executions; "
       << format_duration(s.elapsed_s) << " with " << s.jobs << " workers";
  put("  ", 4);
  std::map<std::string, size_t> kind_impls;
  for (const auto& it : items) ++kind_impls[std::string(target_kind_name(it.kind))];
  for (const std::string kind : {"reference", "library", "injected"}) {
    if (!kind_impls.count(kind)) continue;
    std::vector<std::string> with, without;
    size_t pairs = 0, detected = 0;
    for (const auto& r : rows) {
      if (impl_kind_of(r) != kind) continue;
      ++pairs;
      const auto failing = static_cast<long long>(r.at("failing_inputs").as_number());
      const std::string name = r.at("impl").as_string() + " " + r.at("dtype").as_string();
      if (failing > 0) {
        ++detected;
        with.push_back(name + " (" +
                       std::to_string(static_cast<long long>(r.at("findings").as_number())) + ")");
      } else {
        without.push_back(name);
      }
    }
    line << kind << ": " << kind_impls[kind] << " implementations, " << pairs << " pairs; ";
    const auto& list = kind == "injected" ? without : with;
    if (kind == "injected")
      line << "planted bug detected in " << detected << " of " << pairs << " pairs";
    else
      line << with.size() << " pairs with failing inputs";
    for (size_t i = 0; i < list.size() && i < 12; ++i)
      line << (i ? ", " : (kind == "injected" ? "; undetected: " : ": ")) << list[i];
    if (list.size() > 12) line << ", ... (" << list.size() - 12 << " more)";
    put("  ", 4);
  }
  for (const auto& r : s.rounds)
    for (const auto& u : r.units)
      if (u.status == "error") {
        line << "unit error: " << u.dir << " " << s.impls[u.item] << " " << engine_name(u.engine)
             << ": " << u.problem;
        put("  ", 4);
      }
  const auto& nca = c.at("not_covered").as_array();
  for (size_t i = 0; i < nca.size() && i < 12; ++i)
    line << (i ? ", " : "not covered: ") << nca[i].as_string();
  if (!nca.empty()) put("  ", 4);
}

void print_campaign_files(const std::string& out_dir, const std::vector<std::string>& reports,
                          bool diff, std::ostream& out) {
  out << "findings: " << out_dir << "/findings.jsonl ("
      << read_findings(out_dir + "/findings.jsonl", nullptr).size()
      << ", each input once)\nsummary:  " << out_dir << "/summary.json\nstate:    " << out_dir
      << "/campaign.json\n";
  for (const auto& p : reports) out << "report:   " << p << "\n";
  if (diff) out << "diff:     " << out_dir << "/diff.md\n";
}

}  // namespace stabfuzz::campaign
