#!/usr/bin/env bash
# Soak: `recompdiag train` killed with SIGKILL at KILLS random moments (default 50) loses no
# completed step. After each kill the run file must be empty (killed before the header) or read,
# by Python's json and by `recompdiag compare`; only its last line may be partial, and its steps
# must be exactly 0..n-1, each line whole (the writer issues one write(2) per line). Bounded: every run is small and killed
# within 4 s. Usage: kill_soak.sh RECOMPDIAG [KILLS]
set -euo pipefail
bin=$1
kills=${2:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small=(--epochs 200,100 --steps-per-epoch 10 --batch-size 4 --seq-len 6 --hidden 8 --threads 1
       --quiet --dispatch-sample-every 1)
RANDOM=20261130  # a fixed schedule of kill moments: a failure can be rerun as it was
before_header=0 with_steps=0 partial_last=0 total_steps=0
for ((i = 1; i <= kills; i++)); do
  out="$work/killed$i.jsonl"
  "$bin" train "${small[@]}" --out "$out" 2>/dev/null &
  pid=$!
  delay_ms=$((300 + RANDOM % 3700))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [[ ! -s "$out" ]]; then
    before_header=$((before_header + 1))
    continue
  fi
  # Every line but the last ends with a newline and is one JSON object; steps count up from 0.
  if ! counts=$(python3 - "$out" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
last = lines.pop()  # b"" when the file ends with a newline, else the cut line
records = [json.loads(l) for l in lines]
assert records[0]["type"] == "run", "first line is not the header"
numbers = [r["step"] for r in records if r["type"] == "step"]
assert numbers == list(range(len(numbers))), "steps are not exactly 0..n-1"
if last:
    try:
        json.loads(last)
        raise AssertionError("a whole last line without its newline")
    except json.JSONDecodeError:
        pass
print(len(numbers), 1 if last else 0)
PY
  ); then
    echo "kill_soak: run $i (killed after ${delay_ms} ms): $out is damaged" >&2
    cp "$out" "${TMPDIR:-/tmp}/kill_soak_damaged.jsonl"
    exit 1
  fi
  read -r n cut <<<"$counts"
  total_steps=$((total_steps + n))
  partial_last=$((partial_last + cut))
  with_steps=$((with_steps + (n > 0 ? 1 : 0)))
  ((n > 0)) || continue  # a header alone: compare rightly refuses a run without steps
  # The reader agrees: it loads the file (skipping a cut last line) on both sides of a compare
  # (against a copy: a run killed in phase 1 has no phase 2 to compare with anything else).
  cp "$out" "$work/copy.jsonl"
  code=0
  "$bin" compare "$out" "$work/copy.jsonl" --format json --out "$work/c.json" \
    2>"$work/compare.err" || code=$?
  if ((code == 2)); then
    echo "kill_soak: run $i: the reader refused $out: $(cat "$work/compare.err")" >&2
    cp "$out" "${TMPDIR:-/tmp}/kill_soak_refused.jsonl"
    exit 1
  fi
done
echo "kill_soak: $kills kills: $with_steps files with steps ($total_steps steps kept," \
     "$partial_last with a cut last line), $before_header killed before the header"
