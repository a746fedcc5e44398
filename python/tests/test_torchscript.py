"""A TorchScript step in a Python loop: the JIT probe sees the graph executor's plans as in C++."""

import torch

import recompdiag
from conftest import read_run


def compiled_loss(weight: float):
    """The loss with its weight baked in as a constant, as the seed's recompile mode builds it."""
    unit = torch.jit.CompilationUnit(
        f"def loss(x: Tensor, w: Tensor) -> Tensor:\n    return ((x @ w).relu() * {weight!r}).sum()\n")
    return unit.loss


def test_a_recompiled_step_builds_new_plans_after_warm_up(run_file):
    w = torch.randn(4, 3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.01)
    loss_fn = compiled_loss(0.7)
    with recompdiag.Monitor(None, opt, run_file, compiled=False, log_alerts=False, warmup_steps=4) as m:
        for step in range(14):
            if step == 8:  # phase 2: new weights, a new compiled step
                loss_fn = compiled_loss(0.99)
                m.note_event("compile", "phase 2: loss weight 0.99 baked into a new function")
            with m.step(step) as s:
                loss = loss_fn(torch.randn(8, 4), w)
                loss.backward()
                opt.step()
                opt.zero_grad()
                s.loss = loss
    steps = read_run(run_file)["step"]
    builds = [s["jit"]["plan_builds"] for s in steps]
    assert sum(builds[:8]) >= 1  # the first optimized plan
    assert builds[5:8] == [0, 0, 0]  # steady
    assert sum(builds[8:]) >= 1  # the new function's plan
    alerts = [i for i, s in enumerate(steps) if "compile_after_warmup" in s.get("alerts", [])]
    assert alerts and min(alerts) >= 8
