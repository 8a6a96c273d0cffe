#!/usr/bin/env bash
# Slurm campaign test: a 4-shard campaign through ci/slurm/submit on a throw-away local cluster.
#
#   tests/campaign/slurm_test.sh STABFUZZ_BIN CAMPAIGN_UNION_CHECK
#   tests/campaign/slurm_test.sh --scripts STABFUZZ_BIN CAMPAIGN_UNION_CHECK
#
# Starts ci/slurm/local-cluster, submits `--targets softmax,var --runs 30 --seed 1` as 4 shards,
# waits for the afterok merge job and checks: every shard wrote summary.json and exited 0 or 1,
# the merge started only after every shard had ended, the merged run exists and its exit code
# agrees with the shards', and campaign_union_check finds merged = union of the shards. Then a
# campaign whose shards fail (a bad flag, exit 2) must fail the array and never run the merge,
# and a task requeued mid-run (scontrol requeue) must resume its shard with `campaign --resume`.
# Exit 77 (skip) when not root or Slurm/munge are not installed, unless STABFUZZ_REQUIRE lists slurm
# (or STABFUZZ_REQUIRE_SLURM=1).
# --scripts needs no Slurm: submit's usage errors and --dry-run, and the two sbatch scripts run
# by hand with the environment Slurm would give them (paths with spaces, exit-code mapping).
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"
root="$(cd "$(dirname "$0")/../.." && pwd)"
mode=cluster
if [[ "${1:-}" == --scripts ]]; then mode=scripts; shift; fi
bin="${1:?usage: slurm_test.sh [--scripts] STABFUZZ_BIN CAMPAIGN_UNION_CHECK}"
union="${2:?usage: slurm_test.sh [--scripts] STABFUZZ_BIN CAMPAIGN_UNION_CHECK}"
# Every wait ends by this many seconds after the start, so that the test fails and stops its
# cluster itself before CTest's TIMEOUT (300 s) would kill it.
deadline_s="${STABFUZZ_SLURM_DEADLINE_S:-240}"

skip() {
  if [[ "${STABFUZZ_REQUIRE_SLURM:-0}" == 1 || ",${STABFUZZ_REQUIRE:-}," == *,slurm,* ||
        ",${STABFUZZ_REQUIRE:-}," == *,all,* ]]; then
    echo "slurm_test: FAIL: $* (STABFUZZ_REQUIRE requires slurm)" >&2
    exit 1
  fi
  echo "slurm_test: SKIP: $*"
  exit 77
}
fail() { echo "slurm_test: FAIL: $*" >&2; exit 1; }

[[ -x "$bin" ]] || fail "no stabfuzz binary at $bin"
[[ -x "$union" ]] || fail "no campaign_union_check binary at $union"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
union="$(cd "$(dirname "$union")" && pwd)/$(basename "$union")"

# Runs "$@", which must exit 2 with one line `submit: error: ...` on stderr.
usage_error() {
  local err rc=0
  err="$("$root/ci/slurm/submit" "$@" 2>&1 >/dev/null)" || rc=$?
  ((rc == 2)) || fail "submit $* exited $rc, not 2"
  [[ "$err" == "submit: error: "* && "$err" != *$'\n'* ]] || fail "submit $*: stderr is not one error line: $err"
}

# The scripts without Slurm: submit's checks and command lines, the sbatch scripts run by hand.
scripts_checks() {
  local w="$1" out dry shard_env code k
  mkdir -p "$w/full" && touch "$w/full/x"
  usage_error --shards 0 --out "$w/a"
  usage_error --shards 2
  usage_error --shards 2 --out "$w/a" --time 8x --bin "$bin"
  usage_error --shards 2 --out "$w/a" --bogus
  usage_error --shards 2 --out "$w/full" --bin "$bin"
  usage_error --shards 2 --out "$w/a" --baseline "$w/none" --bin "$bin"
  dry="$("$root/ci/slurm/submit" --shards 4 --out "$w/dry" --time 8h --jobs 2 --seed 3 --partition p \
    --baseline "$w/full" --bin "$bin" --dry-run -- --max-findings 5)"
  # 8 h + 10% + 10 min = 538 minutes; the merge waits on the array, and dies if the array fails.
  for want in "--array=0-3 " "--cpus-per-task=2 " "--time=538 " "--partition=p " "--open-mode=append " \
    "--dependency=afterok:" "--kill-on-invalid-dep=yes " "--seed\\ 3" "--max-findings\\ 5" "--baseline\\ "; do
    [[ "$dry" == *"$want"* ]] || fail "submit --dry-run lacks '$want': $dry"
  done
  [[ ! -e "$w/dry" ]] || fail "submit --dry-run created $w/dry"

  # The sbatch scripts as a 2-task array would run them; spaces in every path.
  mkdir -p "$w/bin dir"
  ln -s "$bin" "$w/bin dir/stabfuzz"
  out="$w/run one"
  mkdir -p "$out"
  shard_env=(STABFUZZ_BIN="$w/bin dir/stabfuzz" OUT="$out" N=2
    STABFUZZ_CAMPAIGN_ARGS="$(printf '%q ' --targets var --runs 5 --seed 1 --jobs 1)")
  for k in 0 1; do
    env "${shard_env[@]}" SLURM_ARRAY_TASK_ID=$k bash "$root/ci/slurm/campaign.sbatch" >"$w/task$k.log" 2>&1 ||
      fail "campaign.sbatch task $k failed: $(tail -n 5 "$w/task$k.log")"
    code="$(cat "$out/jobs/shard-$((k + 1)).exit_code")"
    [[ "$code" == 0 || "$code" == 1 ]] || fail "shard $((k + 1)) exited $code"
    [[ -s "$out/shard-$((k + 1))/summary.json" ]] || fail "shard $((k + 1)) wrote no summary.json"
  done
  env "${shard_env[@]}" STABFUZZ_MERGE_ARGS="" bash "$root/ci/slurm/merge.sbatch" >"$w/merge.log" 2>&1 ||
    fail "merge.sbatch failed: $(tail -n 5 "$w/merge.log")"
  "$union" "$out/merged" "$out/shard-1" "$out/shard-2" || fail "merged run is not the union of the 2 shards"
  # Merge flags go through quoted: a baseline whose path has a space gets its diff.
  env "${shard_env[@]}" STABFUZZ_MERGE_ARGS="$(printf '%q ' --baseline "$out/shard-1")" \
    bash "$root/ci/slurm/merge.sbatch" >"$w/merge-base.log" 2>&1 ||
    fail "merge.sbatch --baseline failed: $(tail -n 5 "$w/merge-base.log")"
  [[ -s "$out/merged/diff.md" ]] || fail "merge.sbatch with STABFUZZ_MERGE_ARGS=--baseline wrote no diff.md"
  # A campaign exiting 2 (bad flag) fails its task; a merge missing a shard fails.
  if env "${shard_env[@]}" OUT="$w/run bad" STABFUZZ_CAMPAIGN_ARGS="--no-such-flag" SLURM_ARRAY_TASK_ID=0 \
    bash "$root/ci/slurm/campaign.sbatch" >"$w/bad.log" 2>&1; then
    fail "campaign.sbatch succeeded although the campaign exited 2"
  fi
  [[ "$(cat "$w/run bad/jobs/shard-1.exit_code")" == 2 ]] || fail "shard-1.exit_code is not 2 after a bad flag"
  # Task 0 again finds its checkpoint, so it resumes (what a requeued task does).
  env "${shard_env[@]}" SLURM_ARRAY_TASK_ID=0 bash "$root/ci/slurm/campaign.sbatch" >"$w/again.log" 2>&1 ||
    fail "campaign.sbatch task 0, second attempt, failed: $(tail -n 5 "$w/again.log")"
  grep -q -- "campaign --resume --out" "$w/again.log" || fail "the second attempt of task 0 did not resume"
  if env "${shard_env[@]}" N=3 bash "$root/ci/slurm/merge.sbatch" >"$w/merge3.log" 2>&1; then
    fail "merge.sbatch succeeded with shards missing"
  fi
  if env "${shard_env[@]}" SLURM_ARRAY_TASK_ID=2 bash "$root/ci/slurm/campaign.sbatch" >/dev/null 2>&1; then
    fail "campaign.sbatch ran task 2 of a 2-task array"
  fi
  echo "slurm_test: submit's checks and --dry-run, campaign.sbatch and merge.sbatch by hand: PASS"
}

if [[ "$mode" == scripts ]]; then
  w="$(mktemp -d "${TMPDIR:-/tmp}/sfz-slurm-scripts.XXXXXX")"
  trap 'rm -rf "$w"' EXIT
  scripts_checks "$w"
  exit 0
fi

[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmd (it runs jobs as their user)"
for b in munged mungekey slurmctld slurmd sbatch squeue sinfo scancel; do
  command -v "$b" >/dev/null || skip "$b not installed (apt-get install slurm-wlm munge)"
done

# Short path: the munge socket lives under it.
work="$(mktemp -d "${TMPDIR:-/tmp}/sfz-slurm.XXXXXX")"
chmod 0755 "$work"  # munged wants every directory above its socket searchable by all
cluster="$work/cluster"
cleanup() {
  local rc=$?
  "$root/ci/slurm/local-cluster" stop "$cluster" || true
  if ((rc != 0)); then
    echo "slurm_test: failed; logs:" >&2
    for f in "$work"/run*/logs/* "$work"/run*/jobs/* "$cluster"/log/*; do
      [[ -f "$f" ]] && { echo "== $f" >&2; tail -n 30 "$f" >&2; }
    done
  fi
  if [[ "${STABFUZZ_KEEP_SLURM_DIR:-0}" == 1 ]]; then echo "slurm_test: kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Even a SIGKILL of this test must not leave the daemons behind: a detached watchdog stops the
# cluster (and removes the directory) once this shell is gone; stdio closed so that CTest does
# not wait for it.
keep=""; [[ "${STABFUZZ_KEEP_SLURM_DIR:-0}" == 1 ]] && keep=1
# shellcheck disable=SC2016  # $1..$4: the watchdog's own arguments
(setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" stop "$3"; [[ -n "$5" ]] || rm -rf "$4"' \
  watchdog "$$" "$root/ci/slurm/local-cluster" "$cluster" "$work" "$keep" </dev/null >/dev/null 2>&1 &)

"$root/ci/slurm/local-cluster" start "$cluster"
# shellcheck disable=SC1091
source "$cluster/env"

# Waits until job $1 has left the queue (done, failed or cancelled) or the time is up.
wait_gone() {
  local job="$1" t0=$SECONDS
  while [[ -n "$(squeue -h -j "$job" -o %i 2>/dev/null || true)" ]]; do
    ((SECONDS < deadline_s)) || { squeue >&2 || true; fail "job $job still queued after $((SECONDS - t0)) s"; }
    sleep 0.5
  done
}
ns() { cat "$1" 2>/dev/null || fail "missing $1"; }

# --- a real campaign in 4 shards ----------------------------------------------------------------
run="$work/run"
t0=$SECONDS
"$root/ci/slurm/submit" --shards 4 --out "$run" --targets softmax,var --runs 30 --seed 1 --bin "$bin"
# shellcheck disable=SC1091
source "$run/jobs/submit.env"
wait_gone "$MERGE_JOB_ID"
echo "slurm_test: array $ARRAY_JOB_ID and merge $MERGE_JOB_ID done in $((SECONDS - t0)) s"

last_end=0 any_findings=0 shards=()
for k in 1 2 3 4; do
  code="$(ns "$run/jobs/shard-$k.exit_code")"
  [[ "$code" == 0 || "$code" == 1 ]] || fail "shard $k exited $code"
  ((code == 1)) && any_findings=1
  [[ -s "$run/shard-$k/summary.json" ]] || fail "shard $k wrote no summary.json"
  end="$(ns "$run/jobs/shard-$k.end")"
  ((end > last_end)) && last_end=$end
  shards+=("$run/shard-$k")
done
[[ -f "$run/jobs/merge.start" ]] || fail "the merge job never ran"
start="$(ns "$run/jobs/merge.start")"
((start > last_end)) || fail "merge started at $start ns, before the last shard ended ($last_end ns)"
echo "slurm_test: merge started $(((start - last_end) / 1000000)) ms after the last shard ended"
merge_code="$(ns "$run/jobs/merge.exit_code")"
[[ "$merge_code" == 0 || "$merge_code" == 1 ]] || fail "merge exited $merge_code"
[[ -d "$run/merged" && -s "$run/merged/summary.json" ]] || fail "no merged run in $run/merged"
((merge_code == any_findings)) ||
  fail "merge exited $merge_code but the shards' exit codes say findings=$any_findings"
"$union" "$run/merged" "${shards[@]}" || fail "campaign_union_check: merged run is not the shards' union"
echo "slurm_test: campaign_union_check: merged = union of the 4 shards"

# --- shards that fail must hold the merge back ----------------------------------------------------
bad="$work/run-bad"
"$root/ci/slurm/submit" --shards 2 --out "$bad" --targets softmax --runs 1 --seed 1 --bin "$bin" \
  -- --no-such-flag
# shellcheck disable=SC1091
source "$bad/jobs/submit.env"
wait_gone "$MERGE_JOB_ID"
for k in 1 2; do
  code="$(ns "$bad/jobs/shard-$k.exit_code")"
  [[ "$code" == 2 ]] || fail "shard $k with a bad flag exited $code, not 2"
done
[[ ! -e "$bad/jobs/merge.start" && ! -e "$bad/merged" ]] || fail "the merge ran although its shards failed"
echo "slurm_test: failed shards (exit 2) kept the merge job from running"

# --- a requeued task (node failure, preemption) resumes its shard from the checkpoint --------------
rq="$work/run-requeue"
"$root/ci/slurm/submit" --shards 1 --out "$rq" --targets softmax --time 15s --seed 2 --bin "$bin"
# shellcheck disable=SC1091
source "$rq/jobs/submit.env"
t0=$SECONDS
until [[ -n "$(ls -A "$rq/shard-1/units" 2>/dev/null)" ]]; do
  ((SECONDS - t0 < 60 && SECONDS < deadline_s)) || fail "the shard wrote no unit in $((SECONDS - t0)) s"
  sleep 0.2
done
scontrol requeue "${ARRAY_JOB_ID}_0"
# Slurm holds a requeued job back 2 minutes (its begin time) once it is pending again; start it now.
t0=$SECONDS
until [[ "$(squeue -h -j "${ARRAY_JOB_ID}_0" -o %T 2>/dev/null)" == PENDING ]]; do
  ((SECONDS - t0 < 60 && SECONDS < deadline_s)) || fail "the requeued task is not pending again after $((SECONDS - t0)) s"
  sleep 0.2
done
scontrol update jobid="${ARRAY_JOB_ID}_0" StartTime=now
wait_gone "$MERGE_JOB_ID"
log="$(cat "$rq"/logs/campaign-*.out)"
grep -q "shard 1/1 (attempt 2)" <<<"$log" || fail "the requeued task did not run a second time"
grep -q -- "campaign --resume --out $rq/shard-1" <<<"$log" || fail "the requeued task did not resume its shard"
code="$(ns "$rq/jobs/shard-1.exit_code")"
[[ "$code" == 0 || "$code" == 1 ]] || fail "the resumed shard exited $code"
[[ -s "$rq/merged/summary.json" ]] || fail "no merged run after the requeued shard"
echo "slurm_test: the requeued task resumed its shard and the merge ran"
echo "slurm_test: PASS"
