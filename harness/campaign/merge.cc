// Joining runs: finding identities, combined summary rows, corpora, `stabfuzz merge`.
#include "harness/campaign/merge.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/core/console.h"
#include "harness/pipeline/blackbox.h"
#include "reports/diff.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "reports/run_data.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

namespace {

namespace fs = std::filesystem;

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* const kSummed[] = {
    "inputs",   "failing_inputs", "oracle_detections", "cestac_detections", "crashes",
    "timeouts", "exceptions",     "undecidable",       "seconds",           "units"};

double number_or(const json::Value& v, const char* key, double def) {
  const json::Value* x = v.get(key);
  return x && (x->is_number() || x->is_string()) ? x->as_number() : def;
}

}  // namespace

std::string pair_of(const json::Value& v) {
  return v.at("impl").as_string() + " " + v.at("dtype").as_string();
}

std::string finding_identity(const json::Value& f) {
  std::string key;
  if (const json::Value* in = f.get("input")) {
    key = json::dump(*in);
    if (const json::Value* p = f.get("params")) key += json::dump(*p);
  } else if (const json::Value* r = f.get("replay")) {
    key = "replay " + r->as_string();
  }
  return pair_of(f) + " " + hex64(hash_str(key));
}

std::vector<json::Value> read_findings(const std::string& path,
                                       std::vector<std::string>* problems) {
  std::vector<json::Value> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      json::Value v = json::parse(line);
      (void)pair_of(v);  // impl and dtype present
      out.push_back(std::move(v));
    } catch (const std::exception& e) {
      if (problems) problems->push_back(path + ":" + std::to_string(n) + ": skipped: " + e.what());
    }
  }
  return out;
}

void RowMerger::add(const json::Value& row) {
  const std::string key = pair_of(row);
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    json::Value r = row;
    if (!r.get("units")) r.set("units", 1);
    order_.push_back(key);
    rows_.emplace(key, std::move(r));
    return;
  }
  json::Value& r = it->second;
  for (const char* k : kSummed)
    if (row.get(k) || r.get(k))
      r.set(k, number_or(r, k, std::string(k) == "units" ? 1 : 0) +
                   number_or(row, k, std::string(k) == "units" ? 1 : 0));
  for (const char* k : {"max_ulp", "max_error_over_tolerance"})
    r.set(k, std::max(number_or(r, k, 0), number_or(row, k, 0)));
  if (row.get("min_digits")) {
    const double m = number_or(row, "min_digits", 0);
    r.set("min_digits", r.get("min_digits") ? std::min(number_or(r, "min_digits", m), m) : m);
  }
  r.set("findings", number_or(r, "findings", 0) + number_or(row, "findings", 0));
  if (const json::Value* f = row.get("failed"); f && f->is_bool()) {
    const json::Value* had = r.get("failed");
    r.set("failed", f->as_bool() || (had && had->is_bool() && had->as_bool()));
  }
  // Counts per name: summed name by name.
  for (const char* key : {"failing_by_kind", "inputs_per_regime"}) {
    const json::Value* add = row.get(key);
    if (!add || !add->is_object()) continue;
    json::Value merged = r.get(key) ? r.at(key) : json::Value(json::Object{});
    for (const auto& [name, count] : add->as_object())
      merged.set(name, number_or(merged, name.c_str(), 0) + count.as_number());
    r.set(key, std::move(merged));
  }
  if (const json::Value* bb = row.get("blackbox"))  // library pairs (pipeline/blackbox.h)
    r.set("blackbox", pipeline::blackbox::merge_totals_json(r.get("blackbox"), *bb));
}

json::Array RowMerger::rows(const std::map<std::string, int64_t>* findings_per_pair) const {
  json::Array out;
  for (const auto& key : order_) {
    json::Value r = rows_.at(key);
    if (findings_per_pair) {
      auto it = findings_per_pair->find(key);
      r.set("findings", it == findings_per_pair->end() ? 0 : it->second);
    }
    out.push_back(std::move(r));
  }
  return out;
}

int64_t merge_corpus_dir(const std::string& from, const std::string& to, bool copy) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return 0;
  fs::create_directories(to, ec);
  if (ec) throw InputError("cannot create directory " + to + ": " + ec.message());
  int64_t added = 0;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // our own temporaries
    const fs::path dest = fs::path(to) / name;
    if (fs::exists(dest, ec)) continue;
    const fs::path tmp = fs::path(to) / (".tmp-" + name + "-" + std::to_string(::getpid()));
    if (copy) {
      fs::copy_file(e.path(), tmp, fs::copy_options::overwrite_existing, ec);
    } else {
      fs::rename(e.path(), tmp, ec);
      if (ec)
        fs::copy_file(e.path(), tmp, fs::copy_options::overwrite_existing,
                      ec);  // another file system
    }
    if (ec) throw InputError("cannot write " + tmp.string() + ": " + ec.message());
    fs::rename(tmp, dest, ec);
    if (ec) throw InputError("cannot write " + dest.string() + ": " + ec.message());
    ++added;
  }
  return added;
}

std::string impl_kind_of(const json::Value& v) {
  const json::Value* k = v.get("impl_kind");
  if (!k) k = v.get("kind");
  return k && k->is_string() ? k->as_string() : "";
}

std::string finding_kind_of(const json::Value& f) {
  if (f.get("impl_kind")) {
    const json::Value* k = f.get("kind");
    if (k && k->is_string()) return k->as_string();
  }
  const json::Value* failure = f.get("failure");
  if (!failure || !failure->is_string()) return "accuracy";
  return failure->as_string() == "timeout" ? "hang" : "crash";
}

int findings_exit_code(const std::vector<json::Value>& findings, const KindSet& fail_on) {
  for (const auto& f : findings) {
    if (impl_kind_of(f) == "injected") continue;
    const auto kind = parse_finding_kind(finding_kind_of(f));
    if (!kind || fail_on.has(*kind)) return 1;  // a kind this build does not know fails
  }
  return 0;
}

namespace {

// Worst finding of each implementation x dtype.
std::map<std::string, const reports::Finding*> worst_per_pair(const reports::RunData& run) {
  std::map<std::string, const reports::Finding*> out;
  for (const auto& f : run.findings) {
    auto [it, inserted] = out.emplace(f.impl + " " + f.dtype, &f);
    if (!inserted && reports::worse(f, *it->second)) it->second = &f;
  }
  return out;
}

PairDiff pair_diff(const reports::RunData& before, const reports::RunData& after) {
  PairDiff d;
  std::map<std::string, const reports::ImplSummary*> old_rows;
  for (const auto& r : before.results) old_rows[r.impl + " " + r.dtype] = &r;
  const auto old_worst = worst_per_pair(before), new_worst = worst_per_pair(after);
  auto describe = [](const reports::Finding* f) {
    if (!f) return std::string("no finding recorded");
    return f->severity +
           (f->failure.empty() ? ", ULP error " + reports::num(f->max_ulp) : ", " + f->failure) +
           ", regime " + (f->regime.empty() ? "-" : f->regime) + "; replay: " + f->replay;
  };
  for (const auto& r : after.results) {
    const std::string key = r.impl + " " + r.dtype;
    const auto o = old_rows.find(key);
    const reports::ImplSummary* before_row = o == old_rows.end() ? nullptr : o->second;
    const auto nw = new_worst.find(key);
    const reports::Finding* now = nw == new_worst.end() ? nullptr : nw->second;
    if (r.injected()) {
      if (before_row && before_row->failing_inputs > 0 && r.failing_inputs == 0)
        d.lost_detection.push_back(key + ": detected last time, not in " +
                                   std::to_string(r.inputs) + " inputs now");
      continue;
    }
    if (r.failing_inputs > 0 && (!before_row || before_row->failing_inputs == 0)) {
      const std::string last =
          !before_row ? " (not tested last time)"
          : 2 * before_row->inputs < r.inputs
              ? " (only " + std::to_string(before_row->inputs) + " inputs last time)"
              : "";
      d.newly_failing.push_back(key + last + ": " + std::to_string(r.failing_inputs) +
                                " failing inputs; worst " + describe(now));
    } else if (r.failing_inputs > 0) {
      ++d.unchanged_failing;
      const auto ow = old_worst.find(key);
      if (now && ow != old_worst.end() && now->severity_rank() > ow->second->severity_rank())
        d.worse.push_back(key + ": worst finding " + ow->second->severity + " -> " + describe(now));
    } else if (before_row && before_row->failing_inputs > 0) {
      const std::string what = key + ": no failing input in " + std::to_string(r.inputs) +
                               " inputs (" + std::to_string(before_row->failing_inputs) +
                               " failing of " + std::to_string(before_row->inputs) + " last time)";
      (2 * r.inputs >= before_row->inputs ? d.fixed : d.undertested).push_back(what);
    }
  }
  return d;
}

void render_pairs(const PairDiff& d, std::ostream& os, size_t max_lines) {
  auto list = [&](const char* title, const std::vector<std::string>& v) {
    if (v.empty()) return;
    os << title << " (" << v.size() << "):\n";
    for (size_t i = 0; i < v.size() && i < max_lines; ++i) wrap(os, "  ", v[i], 4);
    if (v.size() > max_lines) os << "  ... " << v.size() - max_lines << " more in diff.md\n";
  };
  std::ostringstream head;  // wrapped at 100 columns, as every line of the console
  head << d.newly_failing.size() << " pairs newly failing, " << d.worse.size() << " worse, "
       << d.fixed.size() << " no longer failing (+" << d.undertested.size()
       << " too little tested to tell), " << d.unchanged_failing
       << " failing on both; planted bugs: " << d.lost_detection.size() << " no longer detected";
  wrap(os, "references and libraries:", head.str(), 2);
  list("NEWLY FAILING", d.newly_failing);
  list("WORSE", d.worse);
  list("no longer failing", d.fixed);
  list("not failing, but tested on fewer than half last time's inputs", d.undertested);
  list("planted bugs no longer detected (a detector's miss, not the library's)", d.lost_detection);
}

json::Value strings_json(const std::vector<std::string>& v) {
  json::Array a(v.begin(), v.end());
  return json::Value(std::move(a));
}

}  // namespace

int diff_against_baseline(const std::string& baseline, const std::string& out_dir,
                          std::ostream& out, size_t max_lines) {
  const reports::RunData before = reports::load_run(baseline);
  const reports::RunData after = reports::load_run(out_dir);
  const PairDiff pairs = pair_diff(before, after);
  const reports::RunDiff d = reports::diff_runs(before, after);
  std::ostringstream full;
  full << "# " << out_dir << " against " << baseline << "\n\n";
  render_pairs(pairs, full, SIZE_MAX);
  full << "\n## Every finding\n\n" << reports::render_diff(d, before, after);
  reports::write_text_atomically(out_dir + "/diff.md", full.str());
  json::Value j = reports::diff_json(d, before, after);
  json::Value p;
  p.set("newly_failing", strings_json(pairs.newly_failing));
  p.set("worse", strings_json(pairs.worse));
  p.set("no_longer_failing", strings_json(pairs.fixed));
  p.set("undertested", strings_json(pairs.undertested));
  p.set("failing_on_both", static_cast<long long>(pairs.unchanged_failing));
  p.set("lost_detection", strings_json(pairs.lost_detection));
  j.set("pairs", std::move(p));
  j.set("exit_code", pairs.exit_code());
  reports::write_json_atomically(out_dir + "/diff.json", j);
  render_pairs(pairs, out, max_lines);
  std::ostringstream findings;
  findings << d.added.size() << " new, " << d.fixed.size() << " fixed, " << d.changed.size()
           << " changed, " << d.unconfirmed.size() << " not recorded again (matched by "
           << (d.same_seed ? "unit seed, engine and case" : "implementation, dtype and regime")
           << "; every one in " << out_dir << "/diff.md)";
  wrap(out, "findings:", findings.str(), 2);
  return pairs.exit_code();
}

namespace {

// Each run directory's summary.json, in the order given; InputError for --out among them or a
// directory that is not a run.
std::vector<json::Value> read_summaries(const MergeOptions& o) {
  std::vector<json::Value> summaries;
  for (const auto& d : o.dirs) {
    std::error_code ec;
    if (fs::equivalent(d, o.out_dir, ec))
      throw InputError("--out " + o.out_dir + " is one of the inputs");
    const std::string s = reports::read_text(d + "/summary.json");
    if (s.empty()) throw InputError(d + " holds no summary.json (not a stabfuzz run directory)");
    try {
      summaries.push_back(json::parse(s));
    } catch (const std::exception& e) {
      throw InputError(d + "/summary.json: " + e.what());
    }
  }
  return summaries;
}

// Shards of one campaign: warns of those missing or repeated, unfinished campaigns, and settings
// that differ.
void check_shards(const std::vector<std::string>& dirs, std::ostream& log) {
  std::map<int, std::vector<std::string>> shard_dirs;
  int shard_count = 0;
  std::set<std::string> settings;
  for (const auto& d : dirs) {
    const std::string text = reports::read_text(d + "/campaign.json");
    if (text.empty()) continue;
    try {
      const json::Value c = json::parse(text);
      const std::string shard = c.at("shard").as_string();
      int i = 0, n = 0;
      if (std::sscanf(shard.c_str(), "%d/%d", &i, &n) == 2) {
        shard_dirs[i].push_back(d);
        shard_count = std::max(shard_count, n);
      }
      settings.insert("seed " + std::to_string(json::integer<uint64_t>(c.at("seed"))) +
                      ", targets " + c.at("targets").as_string());
      if (!c.at("finished").as_bool())
        log << "stabfuzz merge: warning: " << d
            << " is an unfinished campaign (resume it first for its whole budget)\n";
    } catch (const std::exception& e) {
      log << "stabfuzz merge: warning: " << d << "/campaign.json unreadable: " << e.what() << "\n";
    }
  }
  for (int i = 1; i <= shard_count; ++i) {
    auto it = shard_dirs.find(i);
    if (it == shard_dirs.end())
      log << "stabfuzz merge: warning: shard " << i << "/" << shard_count << " is missing\n";
    else if (it->second.size() > 1)
      log << "stabfuzz merge: warning: shard " << i << "/" << shard_count << " given "
          << it->second.size() << " times\n";
  }
  if (settings.size() > 1)
    log << "stabfuzz merge: warning: the campaigns differ in seed or targets\n";
}

// What the runs hold together: their findings without duplicates, their summary rows joined per
// implementation x dtype.
struct Joined {
  std::vector<json::Value> findings;
  std::map<std::string, int64_t> per_pair;  // findings kept per implementation x dtype
  int64_t duplicates = 0;
  RowMerger rows;
};

// Joins the runs' findings and rows, and copies their corpora into out_dir/corpus.
Joined join_runs(const MergeOptions& o, const std::vector<json::Value>& summaries,
                 std::ostream& log) {
  Joined j;
  std::set<std::string> seen;
  std::error_code ec;
  for (size_t k = 0; k < o.dirs.size(); ++k) {
    std::vector<std::string> problems;
    for (auto& f : read_findings(o.dirs[k] + "/findings.jsonl", &problems)) {
      if (!seen.insert(finding_identity(f)).second) {
        ++j.duplicates;
        continue;
      }
      ++j.per_pair[pair_of(f)];
      j.findings.push_back(std::move(f));
    }
    for (const auto& p : problems) log << "stabfuzz merge: " << p << "\n";
    if (const json::Value* r = summaries[k].get("results"); r && r->is_array())
      for (const auto& row : r->as_array()) j.rows.add(row);
    for (const auto& e : fs::directory_iterator(o.dirs[k] + "/corpus", ec))
      if (e.is_directory(ec))
        merge_corpus_dir(e.path().string(), o.out_dir + "/corpus/" + e.path().filename().string(),
                         true);
    ec.clear();
  }
  return j;
}

// The joined run's summary.json: the common seed (0 if the runs differ), the longest run's
// seconds, the inputs, the counts, the joined rows and the exit code.
json::Value merged_summary(const MergeOptions& o, const std::vector<json::Value>& summaries,
                           const Joined& j) {
  json::Value s;
  s.set("target", "merge");
  uint64_t seed = 0;
  bool same_seed = true;
  for (size_t k = 0; k < summaries.size(); ++k) {
    const auto v = static_cast<uint64_t>(number_or(summaries[k], "seed", 0));
    if (k == 0) seed = v;
    same_seed &= v == seed;
  }
  s.set("seed", same_seed ? seed : 0);
  double seconds = 0;
  for (const auto& m : summaries) seconds = std::max(seconds, number_or(m, "seconds", 0));
  s.set("seconds", seconds);
  json::Array from;
  for (const auto& d : o.dirs) from.emplace_back(d);
  s.set("merged_from", std::move(from));
  s.set("findings", static_cast<int64_t>(j.findings.size()));
  s.set("duplicates_dropped", j.duplicates);
  s.set("results", j.rows.rows(&j.per_pair));
  s.set("exit_code", findings_exit_code(j.findings));
  return s;
}

}  // namespace

int merge_runs(const MergeOptions& o, std::ostream& out, std::ostream& log) {
  if (o.dirs.empty())
    throw InputError("merge needs at least one run directory: stabfuzz merge DIR... --out OUT");
  if (o.out_dir.empty()) throw InputError("merge needs --out DIR for the joined run");
  const std::vector<json::Value> summaries = read_summaries(o);
  check_shards(o.dirs, log);

  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) throw InputError("cannot create directory " + o.out_dir + ": " + ec.message());
  const std::string prev = reports::move_previous_run(o.out_dir);
  if (!prev.empty())
    log << "stabfuzz merge: " << o.out_dir << " held an earlier run; moved its files to " << prev
        << "\n";

  const Joined j = join_runs(o, summaries, log);
  std::string text;
  for (const auto& f : j.findings) text += json::dump(f) + "\n";
  reports::write_text_atomically(o.out_dir + "/findings.jsonl", text);
  reports::write_json_atomically(o.out_dir + "/summary.json", merged_summary(o, summaries, j));
  if (o.write_reports) reports::write_reports(o.out_dir, log);
  out << "merged " << o.dirs.size() << " runs: " << j.rows.size()
      << " implementation x dtype rows, " << j.findings.size() << " findings (" << j.duplicates
      << " duplicates dropped)\n"
      << "findings: " << o.out_dir << "/findings.jsonl\nsummary:  " << o.out_dir
      << "/summary.json\n";
  int code = findings_exit_code(j.findings);
  if (!o.baseline.empty()) {
    out << "diff against " << o.baseline << ":\n";
    code = diff_against_baseline(o.baseline, o.out_dir, out);
  }
  return code;
}

}  // namespace stabfuzz::campaign
