// campaign_union_check MERGED SHARD...: exit 0 when the merged run is exactly the shards' union —
// the same findings (by identity, each once), the same implementation x dtype rows with the same
// input counts. The Slurm test and the merge tests call it.
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "harness/campaign/merge.h"
#include "reports/findings.h"
#include "reports/json.h"

namespace {

using stabfuzz::json::Value;

// "impl dtype" -> inputs, from DIR/summary.json.
std::map<std::string, double> rows(const std::string& dir, bool* ok) {
  std::map<std::string, double> out;
  try {
    const Value s = stabfuzz::json::parse(stabfuzz::reports::read_text(dir + "/summary.json"));
    for (const auto& r : s.at("results").as_array())
      out[stabfuzz::campaign::pair_of(r)] += r.at("inputs").as_number();
  } catch (const std::exception& e) {
    std::cerr << "union_check: " << dir << "/summary.json: " << e.what() << "\n";
    *ok = false;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: campaign_union_check MERGED SHARD...\n";
    return 2;
  }
  bool ok = true;
  std::vector<std::string> problems;
  std::multiset<std::string> merged_ids;
  for (const auto& f :
       stabfuzz::campaign::read_findings(std::string(argv[1]) + "/findings.jsonl", &problems))
    merged_ids.insert(stabfuzz::campaign::finding_identity(f));
  std::set<std::string> union_ids;
  std::map<std::string, double> union_rows;
  for (int i = 2; i < argc; ++i) {
    for (const auto& f :
         stabfuzz::campaign::read_findings(std::string(argv[i]) + "/findings.jsonl", &problems))
      union_ids.insert(stabfuzz::campaign::finding_identity(f));
    for (const auto& [k, v] : rows(argv[i], &ok)) union_rows[k] += v;
  }
  for (const auto& p : problems) {
    std::cerr << "union_check: " << p << "\n";
    ok = false;
  }
  for (const auto& id : merged_ids)
    if (merged_ids.count(id) > 1) {
      std::cerr << "union_check: finding " << id << " appears " << merged_ids.count(id)
                << " times in the merged run\n";
      ok = false;
      break;
    }
  const std::set<std::string> merged_set(merged_ids.begin(), merged_ids.end());
  for (const auto& id : union_ids)
    if (!merged_set.count(id)) {
      std::cerr << "union_check: finding " << id << " of a shard is missing from the merged run\n";
      ok = false;
    }
  for (const auto& id : merged_set)
    if (!union_ids.count(id)) {
      std::cerr << "union_check: finding " << id << " of the merged run is in no shard\n";
      ok = false;
    }
  const auto merged_rows = rows(argv[1], &ok);
  if (merged_rows != union_rows) {
    std::cerr << "union_check: the merged rows (" << merged_rows.size()
              << ") differ from the shards' (" << union_rows.size() << ")\n";
    ok = false;
  }
  std::cout << "union_check: " << merged_set.size() << " findings, " << merged_rows.size()
            << " rows from " << argc - 2
            << " shards: " << (ok ? "the merged run is their union" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
