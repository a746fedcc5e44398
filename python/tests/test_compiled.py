"""The torch.compile probe and its rules, on loops that recompile the way the issues report."""

import pytest
import torch

import recompdiag
from conftest import read_run

dynamo = pytest.importorskip("torch._dynamo")


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def compiled_loop(monitor, lrs, dynamic=False):
    """A Linear + Adam loop whose optimizer step is compiled and whose lr is a Python float that
    takes the given values, one per step (pytorch#107076)."""
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=lrs[0])
    monitor.set_model(model)
    monitor.set_optimizer(opt)

    @torch.compile(backend="eager", dynamic=dynamic)
    def opt_step():
        opt.step()

    x, y = torch.randn(8, 4), torch.randn(8, 1)
    for step, lr in enumerate(lrs):
        for g in opt.param_groups:
            g["lr"] = lr
        with monitor.step(step) as s:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt_step()
            opt.zero_grad()
            s.loss = loss
    return read_run(monitor._out)


def make_monitor(run_file, **kw):
    kw.setdefault("dispatcher_sample_every", 1)
    m = recompdiag.Monitor(None, None, run_file, warmup_steps=3, log_alerts=False, **kw)
    m._out = run_file
    return m


def test_a_recompile_names_its_newest_guard_failure_not_every_older_one(run_file):
    """dynamo lists the failed guard of every compiled version of the frame; the reason keeps the
    newest (the alert's line stays one guard long however many recompiles came before) and the
    event's detail keeps them all."""
    m = make_monitor(run_file)
    compiled_loop(m, [0.01] * 3 + [0.005] * 3 + [0.0025] * 3 + [0.00125] * 3)
    m.close()
    reasons = [e for e in read_run(run_file)["event"] if e["event"] == "compile"]
    assert len(reasons) == 3
    assert "older)" not in reasons[0]["reason"]
    last = reasons[-1]
    older = len(last["detail"]["guard_failures"]) - 1
    assert older >= 1
    assert "lr'] == 0.0025" in last["reason"]
    assert f"(and {older} older)" in last["reason"]
    assert "== 0.01" not in last["reason"]


def test_steady_compiled_loop_compiles_once(run_file):
    m = make_monitor(run_file)
    compiled_loop(m, [0.01] * 6)
    m.close()
    run = read_run(run_file)
    compiled = [s["compiled"] for s in run["step"]]
    assert compiled[0]["compiles"] >= 1
    assert sum(c["compiles"] for c in compiled[1:]) == 0
    assert all(c["region_runs"] >= 1 and c["eager_fallbacks"] == 0 for c in compiled)
    assert not any(s.get("alerts") for s in run["step"])


def test_float_lr_change_recompiles_with_its_guard_failure(run_file):
    m = make_monitor(run_file)
    compiled_loop(m, [0.01] * 5 + [0.001] * 3)
    m.close()
    run = read_run(run_file)
    step5 = run["step"][5]
    assert step5["compiled"]["recompiles"] == 1
    assert step5["alerts"] == ["compile_after_warmup"]
    reasons = [e for e in run["event"] if e["event"] == "compile"]
    assert [e["step"] for e in reasons] == [5]
    assert "guard failed" in reasons[0]["reason"]
    assert "self.param_groups[0]['lr'] == 0.01" in reasons[0]["reason"]
    alerts = [e for e in run["event"] if e["event"] == "alert"]
    assert len(alerts) == 1 and "param_groups[0]['lr']" in alerts[0]["reason"]
    # The summary adds up what the steps say (the C++ recorder writes it).
    summary = run["summary"][0]
    assert summary["compiles"] == sum(s["compiled"]["compiles"] for s in run["step"]) >= 2
    assert summary["alerts"] == 1


def test_recompile_limit_cliff_is_a_compiled_fallback(run_file):
    limit = torch._dynamo.config.recompile_limit if hasattr(torch._dynamo.config, "recompile_limit") \
        else torch._dynamo.config.cache_size_limit
    lrs = [0.01 / (i + 1) for i in range(limit + 3)]
    m = make_monitor(run_file)
    compiled_loop(m, lrs)
    m.close()
    run = read_run(run_file)
    compiled = [s["compiled"] for s in run["step"]]
    # the optimizer's frame: its first compile at step 0, then one recompile per lr up to the limit
    assert [c["recompiles"] for c in compiled[: limit + 1]] == [0] + [1] * (limit - 1) + [0]
    first_eager = next(i for i, c in enumerate(compiled) if c["eager_fallbacks"] > 0)
    assert first_eager == limit
    assert "compiled_fallback" in run["step"][first_eager].get("alerts", [])
    assert all(c["eager_fallbacks"] > 0 for c in compiled[first_eager:])
    # raised once, at the cliff, not at every eager step after it
    assert sum("compiled_fallback" in s.get("alerts", []) for s in run["step"]) == 1
    assert any("recompile_limit" in e["reason"] or "eagerly" in e["reason"] for e in run["event"])


def test_sampling_still_sees_every_compile_and_the_cliff(run_file):
    """With the default sampling, the steps between samples cost nothing, yet a compile turns the
    probe on for its own step and the steps after it: no compile is missed, the cliff is seen."""
    limit = torch._dynamo.config.recompile_limit if hasattr(torch._dynamo.config, "recompile_limit") \
        else torch._dynamo.config.cache_size_limit
    lrs = [0.01] * 12 + [0.01 / (i + 2) for i in range(limit + 2)] + [0.001] * 25
    m = make_monitor(run_file, dispatcher_sample_every=10)
    compiled_loop(m, lrs)
    m.close()
    steps = read_run(run_file)["step"]
    sampled = [s["compiled"]["sampled"] for s in steps]
    assert not all(sampled)  # some steps were skipped...
    assert sum(s["compiled"]["recompiles"] for s in steps) == limit - 1  # ...and no compile
    fallback = [s["step"] for s in steps if "compiled_fallback" in s.get("alerts", [])]
    assert len(fallback) == 1 and 12 + limit - 1 <= fallback[0] <= 12 + limit + 1


@pytest.mark.parametrize("hook,compiles", [("record-function", 1), ("mode-key", 2), (None, 1)])
def test_mode_key_toggled_by_sampling_compiles_a_frame_again(run_file, hook, compiles):
    """Why the mode key needs compiled=False: torch.compile's guards check the thread's dispatch
    keys, which hold the mode key on observed steps only. Once sampling skips a step, the frame
    compiled under the key fails its guard and compiles again. Should a LibTorch stop guarding on
    it, this fails and the Monitor's refusal can go. The default hook ("auto", None here) is the
    mode key in a C++ loop, never in Python: compiled=False with torch.compile compiles once."""
    seen = []

    def backend(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    model = torch.nn.Linear(4, 1)
    loss_of = torch.compile(lambda x, y: torch.nn.functional.mse_loss(model(x), y), backend=backend)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    with recompdiag.Monitor(model, None, run_file, compiled=False, log_alerts=False,
                            dispatcher_sample_every=2, warmup_steps=0, dispatcher_hook=hook) as m:
        for step in range(60):
            with m.step(step) as s:
                s.loss = loss_of(x, y)
    sampled = [st["dispatch"]["sampled"] for st in read_run(run_file)["step"]]
    assert sampled[0] and not all(sampled)  # the key was on, then off
    assert len(seen) == compiles
