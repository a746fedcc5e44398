"""Scores recompdiag's diagnosis of the Python trainer's faults, as `recompdiag bench diagnose`
scores the C++ gallery: each fault against its healthy twin, and each healthy twin against itself,
the two sides taking turns step by step (`recompdiag ab --a-cmd ... --b-cmd ...`).

A fault is diagnosed when the comparison names its signal as a count that B has more of (and the
health rule it should raise fired in B); a healthy pair passes when its verdict is no regression.

    python -m recompdiag.gallery --cli build-torch2/recompdiag --out-dir gallery
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys

# fault -> (the twins' shared flags, the counts B must have more of, the rule B must raise)
CASES = {
    "lr-storm": (["--schedule", "decay", "--no-dynamic"], {"dynamo_compiles", "eager_fallbacks"},
                 "compiled_fallback"),
    "item-break": ([], {"syncs"}, "host_syncs"),
    "shape-change": ([], {"dynamo_compiles"}, "compile_after_warmup"),
}


def run_pair(cli, out_dir, name, a_args, b_args, common):
    seed = [sys.executable, "-m", "recompdiag.seed", "--mode", "mutable", *common]
    a = shlex.join(seed + a_args) + " --out {out}"
    b = shlex.join(seed + b_args) + " --out {out}"
    d = os.path.join(out_dir, name)
    p = subprocess.run([cli, "ab", "--a-cmd", a, "--b-cmd", b, "--a-name", "a", "--b-name", "b",
                        "--out-dir", d], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{name}: recompdiag ab exit {p.returncode}: {p.stderr.strip()[-500:]}")
    report = json.load(open(os.path.join(d, "report.json")))
    b_rules = set()
    for line in open(os.path.join(d, "b.jsonl")):
        rec = json.loads(line)
        if rec.get("type") == "step":
            b_rules.update(rec.get("alerts", []))
    more = {c["count"] for c in report["count_changes"] if c["b_min"] > c["a_max"]}
    return report["verdict"], more, b_rules


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m recompdiag.gallery", description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True, help="the recompdiag executable")
    p.add_argument("--out-dir", default="recompdiag-gallery")
    p.add_argument("--backend", default="aot_eager")
    p.add_argument("--epochs", default="12,4")
    p.add_argument("--steps-per-epoch", default="5")
    args = p.parse_args(argv)
    common = ["--backend", args.backend, "--epochs", args.epochs, "--steps-per-epoch", args.steps_per_epoch]
    rows = []
    for fault, (flags, counts, rule) in CASES.items():
        verdict, more, rules = run_pair(args.cli, args.out_dir, fault, flags, flags + ["--fault", fault], common)
        ok = counts <= more and rule in rules
        rows.append({"pair": f"{fault} vs healthy twin", "verdict": verdict, "b_has_more": sorted(more),
                     "b_rules": sorted(rules), "expected": sorted(counts) + [rule], "correct": ok})
        verdict, more, rules = run_pair(args.cli, args.out_dir, fault + "-healthy", flags, flags, common)
        rows.append({"pair": f"{fault}'s healthy twin vs itself", "verdict": verdict, "b_has_more": sorted(more),
                     "b_rules": sorted(rules), "expected": "no regression", "correct": verdict != "regression"})
    for r in rows:
        print(f"{'ok ' if r['correct'] else 'BAD'} {r['pair']}: verdict {r['verdict']}; B has more "
              f"{', '.join(r['b_has_more']) or 'nothing'}; B's alerts {', '.join(r['b_rules']) or 'none'}")
    score = sum(r["correct"] for r in rows)
    print(f"recompdiag gallery: {score}/{len(rows)} correct")
    with open(os.path.join(args.out_dir, "gallery.json"), "w") as f:
        json.dump({"rows": rows, "correct": score, "total": len(rows)}, f, indent=1)
    return 0 if score == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
