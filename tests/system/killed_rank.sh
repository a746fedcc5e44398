#!/usr/bin/env bash
# A rank killed mid-run (issue 11): the launcher names it, the other rank fails within the
# collective timeout with one clear line instead of hanging, and every rank file keeps its
# completed steps, readable.
# Usage: killed_rank.sh path/to/recompdiag
set -euo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$bin" train --world-size 2 --epochs 40,10 --steps-per-epoch 4 --batch-size 8 --hidden 8 --quiet \
  --collective-timeout 30 --out "$dir/job.jsonl" 2>"$dir/err" &
launcher=$!

# Wait until rank 1 has completed a few steps.
for _ in $(seq 1 1200); do
  n=$(grep -c '"type":"step"' "$dir/job.rank1.jsonl" 2>/dev/null || true)
  [[ ${n:-0} -ge 3 ]] && break
  sleep 0.1
done
rank1=""
for p in $(pgrep -P "$launcher"); do
  if tr '\0' '\n' <"/proc/$p/environ" | grep -qx 'RANK=1'; then rank1=$p; fi
done
[[ -n $rank1 ]] || { echo "FAIL: rank 1 not found among the launcher's children"; exit 1; }

start=$(date +%s)
kill -9 "$rank1"
set +e
wait "$launcher"
code=$?
set -e
took=$(($(date +%s) - start))

cat "$dir/err"
fail() { echo "FAIL: $*"; exit 1; }
[[ $code -eq 1 ]] || fail "launcher exit code $code, expected 1"
grep -q "^recompdiag: error: rank 1 of 2 was killed by signal 9" "$dir/err" ||
  fail "the launcher does not name the killed rank"
grep -q "^recompdiag: error: rank 0 of 2: all-reduce of step [0-9]* failed" "$dir/err" ||
  fail "rank 0 does not say its all-reduce failed"
[[ $(wc -l <"$dir/err") -eq 2 ]] || fail "expected one line per failed rank"
# Within the collective timeout (30 s), with room for a loaded machine: no hang.
((took <= 45)) || fail "the surviving rank took ${took}s to fail"

# Every complete line of both files parses; each keeps its completed steps. The surviving rank
# ends its file with a summary marked failed that counts exactly those steps; the killed one has
# none.
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
for r in (0, 1):
    steps = 0
    summary = None
    lines = open(f"{d}/job.rank{r}.jsonl").read().split("\n")
    for i, line in enumerate(lines[:-1]):
        rec = json.loads(line)
        steps += rec["type"] == "step"
        if rec["type"] == "summary":
            summary = rec
    if steps < 3:
        sys.exit(f"FAIL: rank {r} kept {steps} steps")
    if r == 0:
        if summary is None or summary["status"] != "failed" or summary["steps"] != steps:
            sys.exit(f"FAIL: rank 0's summary {summary} is not failed after {steps} steps")
    elif summary is not None:
        sys.exit("FAIL: the killed rank has a summary")
    print(f"rank {r}: {steps} steps kept, summary {summary and summary['status']}")
PY
echo "killed rank: OK (surviving rank failed ${took}s after the kill)"
