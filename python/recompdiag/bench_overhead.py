"""What the monitor costs a Python trainer's steady step, next to torch.profiler, in one process.

The seed's compiled step (mutable mode: nothing recompiles) runs in rounds; each round runs every
arm for --steps steps in a rotating order: no instrumentation, the recompdiag monitor (default
options) and torch.profiler with CPU activities (what `torch.profiler.profile()` records by
default on a CPU machine). The monitor is one for the whole bench, as in a training run (its
first steps, observed in full, are warm-up); between its stretches it is idle: its callbacks are
off, and a first stage measures what an idle monitor costs against none at all. The profiler is
entered before its stretch and left after it, outside the timed steps. Each arm's per-round
mean step time (the mean: a sampled step's cost counts) is divided by the round's uninstrumented
mean: an arm's ratio and its interval come from the rounds' ratios (which shared the machine)
by the C++ bench's test, Yuen's trimmed paired test (recompdiag._core.arm_ratio).

    python -m recompdiag.bench_overhead --rounds 30
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from . import _core
from .monitor import Monitor
from .seed import SeqModel, compile_steps, make_batches, make_steps, parse_args as seed_args


def build_step(args):
    torch.manual_seed(0)
    cfg = seed_args(["--mode", "mutable", "--batch-size", str(args.batch_size), "--seq-len", str(args.seq_len)])
    model = SeqModel(cfg.input_size, cfg.hidden, cfg.num_classes)
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), eps=1e-7)
    w = torch.tensor([0.7, 0.3])
    batches = make_batches(cfg, cfg.seq_len, torch.Generator().manual_seed(0))
    train_step, opt_step = make_steps(model, opt)
    if args.backend != "none":
        train_step, opt_step = compile_steps((train_step, opt_step), args.backend)

    def step(i):
        x, y_cat, y_bin, weight = batches[i % len(batches)]
        loss, _, _ = train_step(x, y_cat, y_bin, weight, w)
        loss.backward()
        opt_step()
        return loss.detach()

    return model, opt, step


def stretch(arm, step, n, first, monitor=None):
    """Runs n steps under `arm`; returns each step's wall time in ms."""
    times = []
    profiler = None
    if arm == "profiler":
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        profiler.__enter__()
    for i in range(n):
        t0 = time.perf_counter()
        if arm == "monitor":
            monitor.step_begin(first + i)
        loss = step(first + i)
        if arm == "monitor":
            monitor.step_end(loss)
        else:
            float(loss)  # the same host read of the loss
        times.append((time.perf_counter() - t0) * 1e3)
    if profiler:
        profiler.__exit__(None, None, None)
    return times


def ratio_line(name, arm_means, base_means):
    """The arm against the baseline over paired rounds, judged as `recompdiag bench overhead` judges
    its arms (Yuen's trimmed paired test of the per-round ratios)."""
    r = _core.arm_ratio(base_means, arm_means)
    verdict = "interval includes 1.0" if r["includes_one"] else ""
    return f"  {name:26s} {r['ratio']:.3f}x (95% CI {r['low']:.3f}-{r['high']:.3f}) {verdict}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m recompdiag.bench_overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--steps", type=int, default=10, help="steps per arm per round")
    p.add_argument("--backend", default="aot_eager", help="torch.compile backend, or none (eager)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=24)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--sample-every", type=int, default=None,
                   help="the monitor's dispatcher_sample_every (default: the Monitor's)")
    args = p.parse_args(argv)
    if args.rounds < 3 or args.steps < 3:
        p.error("--rounds and --steps take at least 3")
    torch.set_num_threads(args.threads)
    model, opt, step = build_step(args)
    for _ in range(3):  # warm-up: compiles, first-seen everything, profiler initialisation
        stretch("none", step, args.steps, 0)
        stretch("profiler", step, args.steps, 0)

    # Stage 1: an idle monitor (alive, no step marked) against none at all.
    none, idle = [], []
    k = 0
    for r in range(args.rounds):
        for arm in (("none", "idle") if r % 2 == 0 else ("idle", "none")):
            if arm == "idle":
                m = Monitor(model, opt, None, log_alerts=False)
            (idle if arm == "idle" else none).append(statistics.fmean(stretch("none", step, args.steps, k)))
            if arm == "idle":
                m.close()
            k += args.steps

    # Stage 2: one monitor for the rest, as in a training run.
    sampling = {} if args.sample_every is None else {"dispatcher_sample_every": args.sample_every}
    monitor = Monitor(model, opt, None, log_alerts=False, **sampling)
    stretch("monitor", step, 3 * args.steps, k, monitor)  # its first steps are all observed
    k += 3 * args.steps
    arms = ["none", "monitor", "profiler"]
    means = {a: [] for a in arms}
    for r in range(args.rounds):
        for arm in arms[r % 3:] + arms[: r % 3]:
            means[arm].append(statistics.fmean(stretch(arm, step, args.steps, k, monitor)))
            k += args.steps
    monitor.close()
    print(f"recompdiag bench overhead (Python, torch {torch.__version__}, backend {args.backend}, "
          f"{args.threads} thread(s)): {args.rounds} rounds x {args.steps} steps per arm, rotating")
    print(f"  uninstrumented step: mean {statistics.median(means['none']):.3f} ms (median of rounds)")
    print(ratio_line("idle monitor vs none", idle, none))
    print(ratio_line("monitor (default)", means["monitor"], means["none"]))
    print(ratio_line("torch.profiler (CPU)", means["profiler"], means["none"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
