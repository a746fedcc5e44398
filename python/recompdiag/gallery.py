"""Scores recompdiag's diagnosis of torch.compile faults, as `recompdiag bench diagnose` scores
the C++ gallery. Two parts:

- The seed's faults (`--cli`): each fault against its healthy twin, and each healthy twin against
  itself, the two sides taking turns step by step (`recompdiag ab --a-cmd ... --b-cmd ...`). A
  fault is diagnosed when the comparison names its signal as a count that B has more of (and the
  health rule it should raise fired in B); a healthy pair passes when its verdict is no
  regression.
- The known causes (`--causes`, compile_faults.py): each fault's loop under the Monitor, in a
  process of its own with a fresh Inductor cache; diagnosed when the run names the fault's cause
  with its fix. With Inductor, then one loop twice with one cache directory, cold then warm:
  diagnosed when `compare` fails the cold side on its compile cache misses.

    python -m recompdiag.gallery --cli build-torch2/recompdiag --out-dir gallery
    python -m recompdiag.gallery --cli build-torch2/recompdiag --causes --backend inductor
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
    with open(os.path.join(d, "report.json")) as f:
        report = json.load(f)
    b_rules = {g["rule"] for g in report["b"]["alert_groups"]}
    more = {c["count"] for c in report["count_changes"] if c["b_min"] > c["a_max"]}
    return report["verdict"], more, b_rules


def run_report(cli, run):
    """What `recompdiag report RUN --json -` found in one run: the reports' reading of its file."""
    p = subprocess.run([cli, "report", run, "--json", "-"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"recompdiag report exit {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout)["run"]


def run_fault(fault, backend, steps, out, cache):
    """A fault's loop (compile_faults.py) in a process of its own, on Inductor cache `cache`."""
    subprocess.run([sys.executable, "-m", "recompdiag.compile_faults", "--fault", fault,
                    "--backend", backend, "--steps", str(steps), "--out", out],
                   env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache), check=True,
                   capture_output=True, text=True)


def run_cause(cli, out_dir, fault, backend, steps):
    """One known cause: its loop in a process of its own, with a fresh Inductor cache, and what
    `recompdiag report` names in its run: the failed guards' causes, with the known cause's fix."""
    from . import _core
    from .compile_faults import FAULTS

    out = os.path.join(out_dir, f"{fault}.jsonl")
    run_fault(fault, backend, steps, out, os.path.join(out_dir, f"{fault}.inductor"))
    run = run_report(cli, out)
    guards = [g for frame in run["compile"]["frames"] for g in frame["guards"]]
    named = {g["cause"] for g in guards if g.get("cause")}
    expected = FAULTS[fault][1]
    first = next((g for g in guards if g.get("cause") == expected), None)
    known = _core.recompile_cause(first["newest"]) if first else None
    breaks = sum(p["counts"]["graph_breaks"] for p in run["phases"])
    return {"pair": f"{fault} ({backend})", "verdict": "", "b_has_more": [],
            "b_rules": sorted(named), "expected": [expected],
            "fix": known["fix"] if known else "", "graph_breaks": breaks,
            "correct": expected in named}


def run_cold_warm(cli, out_dir, backend, steps):
    """The same loop twice on one Inductor cache: the cold run misses, the warm one hits; the
    comparison (warm as A, cold as B) names B's compile cache misses."""
    cache = os.path.join(out_dir, "cold-warm.inductor")
    paths = {}
    for name in ("cold", "warm"):
        paths[name] = os.path.join(out_dir, f"cache-{name}.jsonl")
        run_fault("python_loss_weight", backend, steps, paths[name], cache)
    report = os.path.join(out_dir, "cache-report.json")
    p = subprocess.run([cli, "compare", "--a", paths["warm"], "--b", paths["cold"],
                        "--fail-on", "compile_cache_misses", "--format", "json", "--out", report],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"recompdiag compare exit {p.returncode}: {p.stderr.strip()[-500:]}")
    with open(report) as f:
        more = {c["count"] for c in json.load(f)["count_changes"] if c["b_min"] > c["a_max"]}
    return {"pair": f"cold cache against warm ({backend})", "verdict": f"exit {p.returncode}",
            "b_has_more": sorted(more), "b_rules": [], "expected": ["compile_cache_misses"],
            "correct": "compile_cache_misses" in more and p.returncode == 1}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m recompdiag.gallery", description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True, help="the recompdiag executable")
    p.add_argument("--out-dir", default="recompdiag-gallery")
    p.add_argument("--backend", default="aot_eager")
    p.add_argument("--epochs", default="12,4")
    p.add_argument("--steps-per-epoch", default="5")
    p.add_argument("--causes", action="store_true",
                   help="score the known causes (and, with inductor, a cold cache against a warm "
                        "one) instead of the seed's faults")
    p.add_argument("--cause-steps", type=int, default=6)
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    common = ["--backend", args.backend, "--epochs", args.epochs, "--steps-per-epoch", args.steps_per_epoch]
    rows = []
    from .compile_faults import FAULTS

    for fault in FAULTS if args.causes else ():
        rows.append(run_cause(args.cli, args.out_dir, fault, args.backend, args.cause_steps))
    if args.causes and args.backend == "inductor":  # the caches are Inductor's and AOTAutograd's
        rows.append(run_cold_warm(args.cli, args.out_dir, args.backend, args.cause_steps))
    for fault, (flags, counts, rule) in ({} if args.causes else CASES).items():
        verdict, more, rules = run_pair(args.cli, args.out_dir, fault, flags, flags + ["--fault", fault], common)
        ok = counts <= more and rule in rules
        rows.append({"pair": f"{fault} vs healthy twin", "verdict": verdict, "b_has_more": sorted(more),
                     "b_rules": sorted(rules), "expected": sorted(counts) + [rule], "correct": ok})
        verdict, more, rules = run_pair(args.cli, args.out_dir, fault + "-healthy", flags, flags, common)
        rows.append({"pair": f"{fault}'s healthy twin vs itself", "verdict": verdict, "b_has_more": sorted(more),
                     "b_rules": sorted(rules), "expected": "no regression", "correct": verdict != "regression"})
    for r in rows:
        mark = "ok " if r["correct"] else "BAD"
        if "fix" in r:
            print(f"{mark} {r['pair']}: causes named {', '.join(r['b_rules']) or 'none'}; "
                  f"graph breaks {r['graph_breaks']}; fix: {r['fix'] or '-'}")
            continue
        print(f"{mark} {r['pair']}: verdict {r['verdict']}; B has more "
              f"{', '.join(r['b_has_more']) or 'nothing'}; B's alerts {', '.join(r['b_rules']) or 'none'}")
    score = sum(r["correct"] for r in rows)
    print(f"recompdiag gallery: {score}/{len(rows)} correct")
    with open(os.path.join(args.out_dir, "gallery.json"), "w") as f:
        json.dump({"rows": rows, "correct": score, "total": len(rows)}, f, indent=1)
    return 0 if score == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
