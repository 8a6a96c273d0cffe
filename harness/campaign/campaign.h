// `stabfuzz campaign`: a time budget over many implementations, in worker processes, checkpointed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/campaign/plan.h"
#include "harness/pipeline/finding_kind.h"

namespace stabfuzz::campaign {

struct CampaignOptions {
  std::string targets = "all";
  double time_s = 0;  // wall-clock budget; <= 0: none (then runs > 0)
  int64_t runs = 0;   // > 0: every unit runs this many inputs (executions), one round per engine
  int jobs = 1;
  uint64_t seed = 1;
  Shard shard;
  std::string out_dir;
  bool resume = false;
  std::string baseline;  // an earlier campaign: diff, corpora, budget weights
  std::string binary;    // this stabfuzz, run for each unit
  // Flags every unit gets (plugins, --cancel-digits, --timeout-ms, --max-findings, --shrink-evals).
  std::vector<std::string> unit_flags;
  KindSet fail_on = KindSet::defaults();  // finding kinds that make the exit code 1
  bool write_reports = true;
  bool progress_tty = false;
  double progress_every_s = 10;
};

// Runs (or resumes) the campaign; its state is in OUT/campaign.json after every unit, its findings
// in OUT/findings.jsonl (appended, deduplicated, flushed one at a time). Returns the exit status:
// with a baseline the diff's (1: new or worse finding, or a lost detection), else 1 when a
// reference or library implementation has a finding; 130 when interrupted (resume it).
int run_campaign(const Registry& reg, CampaignOptions o, std::ostream& out, std::ostream& progress);

}  // namespace stabfuzz::campaign
