// A campaign's checkpoint (OUT/campaign.json) and its joined summary.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/campaign/plan.h"
#include "harness/pipeline/finding_kind.h"
#include "reports/json.h"

namespace stabfuzz::campaign {

// One process: one implementation, one engine, one slice of the budget.
struct UnitRecord {
  size_t item = 0;
  Engine engine = Engine::property;
  int round = 1;
  double budget_s = 0;
  uint64_t seed = 1;
  std::string dir;      // relative to the campaign directory: units/rNN-IIII
  std::string command;  // the unit's command line (its reproducer when it crashes or hangs)
  // pending, running, done, crashed (a signal), hung (killed by its guard), error (exit status
  // other than 0 or 1: a usage or internal error), skipped (the budget ran out first)
  std::string status = "pending";
  int exit_code = 0;
  std::string problem;  // error: the last line the unit wrote
  int64_t findings = 0, new_findings = 0, executions = 0, corpus_added = 0;
  bool corpus_merged = false;
  double seconds = 0;
};

struct RoundRecord {
  int number = 1;
  Engine engine = Engine::property;
  std::vector<UnitRecord> units;
};

struct CampaignState {
  int version = 1;
  uint64_t seed = 1;
  std::string targets, shard = "1/1", baseline;
  double time_s = 0;
  int64_t runs = 0;
  int jobs = 1;
  std::vector<std::string> unit_flags;
  std::vector<std::string> impls;        // the work list (this shard), in order
  std::vector<std::string> unavailable;  // "id: reason"
  std::vector<RoundRecord> rounds;
  double elapsed_s = 0;  // campaign time spent, over every session
  bool finished = false;
};

// OUT/campaign.json, written through a temporary file and rename() after every unit.
void save_state(const CampaignState& s, const std::string& out_dir);
// Throws InputError when it is missing or malformed.
CampaignState load_state(const std::string& out_dir);
// The text of a campaign.json read from `path`; throws InputError "path: ..." when malformed.
CampaignState parse_state(const std::string& text, const std::string& path);

struct CampaignSummary {
  json::Value summary;  // what summary.json holds
  int exit_code = 0;    // 1: a reference or library implementation has a finding
};

// Joins the units' summary rows (and the campaign's own crash and hang findings) into
// OUT/summary.json.
CampaignSummary write_campaign_summary(const CampaignState& s, const std::vector<WorkItem>& items,
                                       const std::string& out_dir, const KindSet& fail_on);
// The morning answer in a few lines: coverage, units, and which implementations have findings.
void print_campaign_summary(const CampaignSummary& sum, const CampaignState& s,
                            const std::vector<WorkItem>& items, const std::string& out_dir,
                            std::ostream& out);
// A killed campaign may leave half a line at the end of findings.jsonl: cuts it (its unit re-runs).
void cut_torn_tail(const std::string& path);
// `s` as one word of a POSIX shell command line: bare when safe, else single-quoted.
std::string shell_word(const std::string& s);
// The campaign's files, one a line, last: findings, summary, state, then `reports` (report.md,
// report.html, junit.xml, when written) and the baseline diff when there is one.
void print_campaign_files(const std::string& out_dir, const std::vector<std::string>& reports,
                          bool diff, std::ostream& out);

}  // namespace stabfuzz::campaign
