#!/usr/bin/env bash
# ci/nightly twice in a scratch directory: the first night has no baseline, the second diffs against
# the first, becomes `latest`, and a night killed midway is resumed by the next call.
set -euo pipefail
repo="$1"
export STABFUZZ_BIN="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
targets=var/cpu/stable,var/injected/naive_one_pass
run() { "$repo/ci/nightly" --no-build --time 2m --targets "$targets" --dir "$work/n" --keep 2 -- --runs 20 --quiet; }

run > "$work/1.out" 2> "$work/1.err" || { echo "first night failed"; cat "$work/1.err"; exit 1; }
first="$(readlink "$work/n/latest")"
[[ -f "$work/n/$first/summary.json" && ! -e "$work/n/$first/diff.md" ]] || { echo "first night: no summary or an unexpected diff"; exit 1; }
[[ ! -e "$work/n/current" ]] || { echo "current left behind"; exit 1; }
sleep 1
run > "$work/2.out" 2> "$work/2.err" || { echo "second night: exit $? (nothing changed, 0 expected)"; cat "$work/2.out" "$work/2.err"; exit 1; }
second="$(readlink "$work/n/latest")"
[[ "$second" != "$first" ]] || { echo "latest did not move"; exit 1; }
grep -q "diff against" "$work/2.out" || { echo "no diff printed"; cat "$work/2.out"; exit 1; }
[[ -f "$work/n/$second/diff.md" ]] || { echo "no diff.md"; exit 1; }

# A night killed midway (SIGKILL): `current` stays, and the next call resumes it.
sleep 1
"$repo/ci/nightly" --no-build --time 2m --targets "$targets" --dir "$work/n" -- --runs 400 --quiet > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -L "$work/n/current" ]] && grep -q '"status": "done"' "$work/n/current/campaign.json" 2>/dev/null && break
  sleep 0.05
done
pkill -KILL -P "$pid" -f "campaign" || true
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[[ -L "$work/n/current" ]] || { echo "no current night after the kill"; exit 1; }
killed="$(readlink "$work/n/current")"
run > "$work/3.out" 2> "$work/3.err" || { echo "resumed night failed"; cat "$work/3.err"; exit 1; }
grep -q "resuming" "$work/3.err" || { echo "the killed night was not resumed"; cat "$work/3.err"; exit 1; }
[[ "$(readlink "$work/n/latest")" == "$killed" && ! -e "$work/n/current" ]] || { echo "resumed night is not latest"; exit 1; }
# --keep 2: the oldest night is gone.
[[ ! -e "$work/n/$first" ]] || { echo "--keep 2 kept the first night"; exit 1; }
echo "nightly_test: 3 nights, baseline diff, resume after SIGKILL, --keep: ok"
