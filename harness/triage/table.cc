// The library triage table (table.h).
#include "harness/triage/table.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "reports/run_data.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::triage {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

std::string first_words(const std::string& s, int n) {
  size_t pos = 0;
  for (int k = 0; k < n && pos != std::string::npos; ++k) pos = s.find(' ', pos + (k ? 1 : 0));
  return s.substr(0, pos);
}

// A pair's failing inputs of one kind across the runs, and its smallest failing input.
struct Group {
  long long failing = 0;
  std::set<uint64_t> seeds;
  const reports::Finding* example = nullptr;
};

bool better_example(const reports::Finding& a, const reports::Finding* b) {
  if (!b) return true;
  if (a.n != b->n) return a.n < b->n;
  return a.error_over_tolerance > b->error_over_tolerance;
}

std::string cell(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

std::string input_text(const reports::Finding& f) {
  std::string out;
  for (size_t i = 0; i < f.input.size() && i < 6; ++i)
    out += (i ? ", " : "") + reports::num(f.input[i], 6);
  if (f.input.size() > 6) out += ", … (" + std::to_string(f.input.size()) + " values)";
  return "[" + out + "]";
}

const VerdictRow* verdict_for(const std::vector<VerdictRow>& v, const std::string& impl,
                              const std::string& dtype, const std::string& kind) {
  for (const auto& r : v)
    if (r.impl == impl && (r.dtype == "*" || r.dtype == dtype) && (r.kind == "*" || r.kind == kind))
      return &r;
  return nullptr;
}

}  // namespace

std::vector<VerdictRow> read_verdicts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read " + path);
  std::vector<VerdictRow> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_tabs(line);
    if (f.size() != 5)
      throw InputError(path + ":" + std::to_string(n) +
                       ": expected 5 tab-separated fields (impl, dtype, kind, verdict, evidence)");
    out.push_back({f[0], f[1], f[2], f[3], f[4]});
  }
  return out;
}

std::string library_of(const Target& t) {
  const std::string& d = t.description;
  if (d.rfind("oneDNN ", 0) == 0 || d.rfind("OpenBLAS ", 0) == 0 || d.rfind("libtorch ", 0) == 0)
    return first_words(d, 2);
  if (const size_t v = d.find("Math Kernel Library Version "); v != std::string::npos) {
    const std::string rest = d.substr(v + 28);
    return "Intel MKL " + rest.substr(0, rest.find_first_of("- "));
  }
  return first_words(d, 1);
}

std::string library_table(const Registry& registry, const std::vector<std::string>& run_dirs,
                          const std::vector<VerdictRow>& verdicts, const std::string& command) {
  std::vector<reports::RunData> runs;
  for (const auto& d : run_dirs) runs.push_back(reports::load_run(d));
  // (impl, dtype) -> inputs, and (impl, dtype, kind) -> group, over every run.
  std::map<std::pair<std::string, std::string>, long long> inputs;
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  std::set<uint64_t> seeds;
  for (const auto& run : runs) {
    seeds.insert(run.seed);
    for (const auto& r : run.results) {
      if (r.impl_kind != "library") continue;
      inputs[{r.impl, r.dtype}] += r.inputs;
      for (const auto& [kind, n] : r.failing_by_kind) {
        Group& g = groups[{r.impl, r.dtype, kind}];
        g.failing += n;
        g.seeds.insert(run.seed);
      }
    }
    for (const auto& f : run.findings) {
      if (f.impl_kind != "library") continue;
      auto it = groups.find({f.impl, f.dtype, f.kind});
      if (it != groups.end() && better_example(f, it->second.example)) it->second.example = &f;
    }
  }
  std::ostringstream os;
  long long pairs_failing = 0;
  std::set<std::pair<std::string, std::string>> failing_pairs;
  std::map<std::string, long long> by_verdict;
  for (const auto& [key, g] : groups) {
    failing_pairs.insert({std::get<0>(key), std::get<1>(key)});
    const VerdictRow* v =
        verdict_for(verdicts, std::get<0>(key), std::get<1>(key), std::get<2>(key));
    ++by_verdict[v ? v->verdict : "untriaged"];
  }
  pairs_failing = static_cast<long long>(failing_pairs.size());
  os << "Regenerate: `" << command << "`\n\n"
     << inputs.size() << " library implementation x dtype pairs, seeds";
  for (uint64_t s : seeds) os << " " << s;
  os << "; " << pairs_failing << " pairs with failing inputs, " << groups.size()
     << " pair x kind rows:";
  for (const auto& [verdict, n] : by_verdict) os << " " << n << " " << verdict << ",";
  os.seekp(-1, std::ios_base::cur);
  os << ".\n\n| library | implementation | dtype | kind | failing / inputs | seeds | smallest "
        "failing input | computed | exact | err/tol | verdict | evidence |\n"
        "|---|---|---|---|---:|---|---|---:|---:|---:|---|---|\n";
  for (const auto& [key, g] : groups) {
    const auto& [impl, dtype, kind] = key;
    const auto [fam, t] = registry.find_target(impl);
    const VerdictRow* v = verdict_for(verdicts, impl, dtype, kind);
    std::string seed_list;
    for (uint64_t s : g.seeds) seed_list += (seed_list.empty() ? "" : ",") + std::to_string(s);
    os << "| " << (t ? library_of(*t) : "?") << " | `" << impl << "` | " << dtype << " | " << kind
       << " | " << g.failing << " / " << inputs[{impl, dtype}] << " | " << seed_list << " | ";
    if (g.example)
      os << cell(input_text(*g.example)) << " | " << reports::num(g.example->computed_dec, 7)
         << " | " << reports::num(g.example->exact_dec, 7) << " | "
         << reports::num(g.example->error_over_tolerance) << " | ";
    else
      os << "(not recorded) | | | | ";
    os << (v ? v->verdict : "untriaged") << " | " << (v ? cell(v->evidence) : "") << " |\n";
  }
  return os.str();
}

}  // namespace stabfuzz::triage
