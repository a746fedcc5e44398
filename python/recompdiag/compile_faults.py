"""Training loops that make torch.compile recompile the way users report, one per known cause:
what the gallery scores and the tests provoke. Each loop takes `steps`, a generator of step
indices whose body runs inside a Monitor step, and the backend to compile with.

    python -m recompdiag.compile_faults --fault float_lr --backend inductor --out run.jsonl
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Iterator

import torch

Steps = Callable[[], Iterator[int]]


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def float_lr(steps: Steps, backend: str) -> None:
    """A Python float lr that a scheduler halves every 2 steps (pytorch#107076)."""
    model = _mlp()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    step = torch.compile(opt.step, backend=backend)
    for _ in steps():
        model(torch.randn(4, 8)).sum().backward()
        step()
        opt.zero_grad()
        sched.step()


def float_betas(steps: Steps, backend: str) -> None:
    """Adam's beta1 warmed up by hand, a Python float changed every 2 steps."""
    model = _mlp()
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
    step = torch.compile(opt.step, backend=backend)
    for i in steps():
        model(torch.randn(4, 8)).sum().backward()
        step()
        opt.zero_grad()
        opt.param_groups[0]["betas"] = (0.9 - 0.01 * (i // 2), 0.999)


def train_eval(steps: Steps, backend: str) -> None:
    """A compiled model with dropout, evaluated every other step."""
    model = torch.nn.Sequential(_mlp(), torch.nn.Dropout(0.1))
    forward = torch.compile(model, backend=backend)
    for i in steps():
        model.train(i % 2 == 0)
        forward(torch.randn(4, 8))


def grad_mode(steps: Steps, backend: str) -> None:
    """The compiled model called under torch.no_grad() every other step (an evaluation)."""
    forward = torch.compile(_mlp(), backend=backend)
    for i in steps():
        with torch.set_grad_enabled(i % 2 == 0):
            forward(torch.randn(4, 8))


def new_size(steps: Steps, backend: str) -> None:
    """A sequence length that grows every 2 steps, compiled with dynamic=False."""
    forward = torch.compile(_mlp(), backend=backend, dynamic=False)
    for i in steps():
        forward(torch.randn(2 + i // 2, 8))


def rebuilt_optimizer(steps: Steps, backend: str) -> None:
    """A fresh optimizer every step, passed to a compiled step function."""
    model = _mlp()

    @torch.compile(backend=backend)
    def step(opt: torch.optim.Optimizer) -> None:
        opt.step()

    for _ in steps():
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(4, 8)).sum().backward()
        step(opt)


def dtype_change(steps: Steps, backend: str) -> None:
    """Inputs that turn from float32 to float64 at step 2."""
    forward = torch.compile(lambda x: torch.relu(x * 2).sum(), backend=backend)
    for i in steps():
        forward(torch.randn(4, dtype=torch.float32 if i < 2 else torch.float64))


def python_loss_weight(steps: Steps, backend: str) -> None:
    """The Keras user's loss weights, Python floats, changed at step 2 ([0.7, 0.3] then
    [0.99, 0.01]): the seed's recompile mode in five lines (pytorch#163093)."""
    w = [0.7, 0.3]
    loss = torch.compile(lambda x: x.sum() * w[0] + x.mean() * w[1], backend=backend)
    for i in steps():
        if i == 2:
            w[:] = [0.99, 0.01]
        loss(torch.randn(4))


def item_branch(steps: Steps, backend: str) -> None:
    """A branch on `h.mean().item()` in the step: a graph break, and the value read guarded in the
    resume function."""

    @torch.compile(backend=backend)
    def forward(x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        if h.mean().item() > 0:
            h = h + 1
        return h * 3

    for _ in steps():
        forward(torch.randn(4))


# fault -> (its loop, the cause the run must name: a key of lib's recompile_cause.cpp)
FAULTS: dict[str, tuple[Callable[[Steps, str], None], str]] = {
    "float_lr": (float_lr, "float_lr"),
    "float_betas": (float_betas, "float_hyperparameter"),
    "train_eval": (train_eval, "train_eval"),
    "grad_mode": (grad_mode, "grad_mode"),
    "new_size": (new_size, "new_size"),
    "rebuilt_optimizer": (rebuilt_optimizer, "rebuilt_object"),
    "dtype_change": (dtype_change, "dtype_change"),
    "python_loss_weight": (python_loss_weight, "python_number"),
    "item_branch": (item_branch, "host_value"),
}


def run(fault: str, out: str, backend: str = "eager", n: int = 6) -> None:
    """Runs `fault`'s loop for `n` steps under a Monitor writing `out`."""
    run_loop(FAULTS[fault][0], out, backend, n, config={"fault": fault})


def run_loop(loop: Callable[[Steps, str], None], out: str, backend: str = "eager", n: int = 6,
             config: dict | None = None) -> None:
    """Runs `loop` (a fault's, or your own) for `n` steps under a Monitor writing `out`: every
    step observed, warm-up 2 steps."""
    from .monitor import Monitor

    with Monitor(None, None, out, warmup_steps=2, log_alerts=False, dispatcher_sample_every=1,
                 config={**(config or {}), "backend": backend}) as m:

        def steps() -> Iterator[int]:
            for i in range(n):
                with m.step(i) as s:
                    yield i
                    s.loss = 0.0

        loop(steps, backend)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m recompdiag.compile_faults",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--fault", required=True, choices=sorted(FAULTS))
    p.add_argument("--backend", default="eager")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    run(args.fault, args.out, args.backend, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
