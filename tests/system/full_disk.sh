#!/usr/bin/env bash
# A full disk (issue 10): a small tmpfs, mounted in a private mount namespace (it vanishes with
# this script), fills up under `recompdiag train` and under `compare --out`. Each must stop with
# one clear line and exit 1; the run file keeps every completed step (only its last line may be
# cut); the previous report stays whole and no temporary file is left. Skips (77) where tmpfs
# cannot be mounted (not root, or the container forbids it): tests/cli_test's RLIMIT_FSIZE case
# covers the write error there. Usage: full_disk.sh RECOMPDIAG FIXTURES_DIR
set -euo pipefail
bin=${1:?usage: $0 RECOMPDIAG FIXTURES_DIR}
fixtures=${2:?usage: $0 RECOMPDIAG FIXTURES_DIR}

if [ -z "${RECOMPDIAG_IN_MOUNT_NS:-}" ]; then
  if ! command -v unshare >/dev/null || ! unshare -m --propagation private true 2>/dev/null; then
    echo "SKIP: cannot make a private mount namespace (unshare -m needs root)"
    exit 77
  fi
  RECOMPDIAG_IN_MOUNT_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

work=$(mktemp -d)
disk=$work/disk
mkdir "$disk"
trap 'umount "$disk" 2>/dev/null || true; rm -rf "$work"' EXIT
if ! mount -t tmpfs -o size=64k tmpfs "$disk" 2>"$work/mount.err"; then
  echo "SKIP: cannot mount a tmpfs here: $(cat "$work/mount.err")"
  exit 77
fi

# errors FILE: the tool's own lines of a stderr capture (the monitor's alert lines aside).
errors() { grep -v '^recompdiag alert' "$1" || true; }

fail() {
  echo "full_disk: $*" >&2
  exit 1
}

echo "== train onto a 64 KiB tmpfs"
code=0
"$bin" train --epochs 200,100 --batch-size 4 --seq-len 6 --hidden 8 --threads 1 --quiet \
  --out "$disk/run.jsonl" 2>"$work/train.err" || code=$?
[ "$code" = 1 ] || fail "train on a full disk exited $code, not 1: $(cat "$work/train.err")"
lines=$(errors "$work/train.err")
echo "$lines"
[ "$(printf '%s\n' "$lines" | wc -l)" = 1 ] || fail "not one line on stderr"
[[ $lines == "recompdiag: error: cannot write run file"*"No space left on device"* ]] ||
  fail "unexpected error line"
python3 - "$disk/run.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
last = lines.pop()  # b"" when the file ends with a newline, else the cut line
records = [json.loads(l) for l in lines]
assert records[0]["type"] == "run", "first line is not the header"
steps = [r["step"] for r in records if r["type"] == "step"]
assert len(steps) >= 20, f"only {len(steps)} steps before the disk filled"
assert steps == list(range(len(steps))), "steps are not exactly 0..n-1"
print(f"run file: {len(steps)} whole steps, last line {'cut' if last else 'whole'}")
PY
# The reader takes it as it is (a cut last line is skipped), on both sides of a compare.
cp "$disk/run.jsonl" "$work/copy.jsonl"
code=0
"$bin" compare "$disk/run.jsonl" "$work/copy.jsonl" --format json --out "$work/c.json" \
  2>"$work/read.err" || code=$?
[ "$code" != 2 ] || fail "the reader refused the run file: $(cat "$work/read.err")"

echo "== compare --out onto the full tmpfs, over a previous report"
rm "$disk/run.jsonl"
echo "previous report" >"$disk/report.md"
head -c 1M /dev/zero >"$disk/filler" 2>/dev/null || true  # fills the disk to the last block
code=0
"$bin" compare "$fixtures/compare_baseline.jsonl" "$fixtures/compare_slower.jsonl" \
  --format html --out "$disk/report.md" >/dev/null 2>"$work/compare.err" || code=$?
[ "$code" = 1 ] || fail "compare onto a full disk exited $code, not 1: $(cat "$work/compare.err")"
line=$(grep '^recompdiag: error' "$work/compare.err")
echo "$line"
[ "$(printf '%s\n' "$line" | wc -l)" = 1 ] || fail "not one error line"
[[ $line == "recompdiag: error: cannot write '$disk/report.md'"* ]] || fail "unexpected line"
[ "$(cat "$disk/report.md")" = "previous report" ] || fail "the previous report was damaged"
leftovers=$(find "$disk" -name '*.tmp.*' | wc -l)
[ "$leftovers" = 0 ] || fail "$leftovers temporary files left behind"
echo "full_disk: passed"
