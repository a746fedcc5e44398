"""torch.compile's ledger under the Monitor: each known cause of a recompile provoked by a loop
and named with its fix, graph breaks with their reasons, the recompile budget before the eager
cliff, and the caches' outcomes cold and warm."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from recompdiag import compile_faults
from conftest import read_run

dynamo = pytest.importorskip("torch._dynamo")


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def run_under_monitor(run_file, loop, n=6):
    """A loop of the test's own (steps, backend), as the faults' loops run."""
    compile_faults.run_loop(loop, run_file, backend="eager", n=n)
    return read_run(run_file)


def run_fault(run_file, fault):
    compile_faults.run(fault, run_file, backend="eager")
    return read_run(run_file)


@pytest.mark.parametrize("fault", sorted(compile_faults.FAULTS))
def test_each_known_cause_is_named_with_its_fix(run_file, fault):
    cause = compile_faults.FAULTS[fault][1]
    run = run_fault(run_file, fault)
    compiles = [e for e in run["event"] if e["event"] == "compile"]
    assert compiles, "the loop did not recompile"
    first = compiles[0]
    assert first["detail"]["cause"] == cause, first["reason"]
    assert f"; fix: {first['detail']['fix']}" in first["reason"]
    # The alert raised on it carries the cause as well (the ones after warm-up).
    alerts = [e for e in run["event"] if e["event"] == "alert" and e["step"] == first["step"]]
    for alert in alerts:
        assert "cause:" in alert["reason"]


def test_an_unknown_guard_keeps_dynamo_s_words(run_file):
    class Box:
        pass

    def loop(steps, backend):
        f = torch.compile(lambda b, x: x * 2 if isinstance(b, Box) else x, backend=backend)
        for i in steps():
            f(Box() if i < 3 else 1, torch.randn(2))

    run = run_under_monitor(run_file, loop)
    compiles = [e for e in run["event"] if e["event"] == "compile"]
    assert compiles
    assert "cause" not in compiles[0]["detail"]
    assert "; fix:" not in compiles[0]["reason"]


def test_a_graph_break_is_counted_with_its_reason_and_hint(run_file):
    run = run_fault(run_file, "item_branch")
    ledger = [s["compiled"] for s in run["step"]]
    assert all(c["ledger"] for c in ledger)
    assert ledger[0]["graph_breaks"] >= 1
    assert sum(c["graph_breaks"] for c in ledger[1:]) == 0
    breaks = [e for e in run["event"] if e["event"] == "graph_break"]
    assert breaks and breaks[0]["step"] == 0
    assert "item()" in breaks[0]["reason"]
    assert "capture_scalar_outputs" in breaks[0]["reason"]  # dynamo's hint, the fix
    # Where in user code it broke: the `if h.mean().item() > 0` line of compile_faults.py.
    line = next(n for n, text in enumerate(open(compile_faults.__file__), 1) if "if h.mean().item() > 0" in text)
    assert breaks[0]["detail"]["sites"] == [f"compile_faults.py:{line} in forward"]
    # The break's value read is guarded in the resume function: its recompile follows.
    assert any(e["detail"].get("cause") == "host_value" for e in run["event"]
               if e["event"] == "compile")


def test_compile_ids_count_what_dynamo_compiled_and_nothing_after(run_file):
    run = run_fault(run_file, "python_loss_weight")
    ids = [s["compiled"]["compile_ids"] for s in run["step"]]
    assert ids[0] >= 1 and ids[1] == 0
    assert ids[2] == 1  # the loss weights changed: one recompile, one compile id
    assert sum(ids[3:]) == 0
    assert run["step"][2]["compiled"]["frame_compiles_max"] == 2
    assert run["step"][-1]["compiled"]["recompile_limit"] == torch._dynamo.config.recompile_limit
    probes = run["run"][0]["probes"]
    assert probes["compile_ledger"]["available"]
    if not torch.cuda.is_available():  # cudagraph trees record on a GPU only, and say so
        assert not probes["cudagraphs"]["available"]
        assert probes["cudagraphs"]["reason"].startswith("unavailable: no CUDA device")


def test_recompile_budget_warns_before_the_eager_cliff(run_file):
    lrs = [0.1 / (i + 1) for i in range(8)]

    def loop(steps, backend):
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=lrs[0])
        step = torch.compile(opt.step, backend=backend, dynamic=False)  # a recompile per lr
        for i in steps():
            opt.param_groups[0]["lr"] = lrs[i]
            model(torch.randn(2, 4)).sum().backward()
            step()

    with torch._dynamo.config.patch(recompile_limit=4):
        run = run_under_monitor(run_file, loop, n=8)
    alerts = {rule: [s["step"] for s in run["step"] if rule in s.get("alerts", [])]
              for rule in ("recompile_budget", "compiled_fallback")}
    assert alerts["recompile_budget"], "no budget alert"
    assert alerts["compiled_fallback"], "the loop never reached the limit"
    assert alerts["recompile_budget"][0] < alerts["compiled_fallback"][0]
    budget = next(e for e in run["event"] if e["event"] == "alert"
                  and e["reason"].startswith("recompile_budget"))
    assert "of the 4 compiles" in budget["reason"]
    assert "lr'] ==" in budget["reason"]  # the guard that keeps failing
    assert "cause: the learning rate is a Python float" in budget["reason"]


CACHE_JOB = textwrap.dedent("""
    import sys, torch, recompdiag
    model = torch.nn.Linear(8, 4)
    f = torch.compile(lambda x: torch.relu(model(x)).sum(), backend="inductor")
    with recompdiag.Monitor(None, None, sys.argv[1], log_alerts=False) as m:
        for i in range(3):
            with m.step(i) as s:
                s.loss = f(torch.randn(4, 8))
""")


def test_a_cold_cache_misses_and_a_warm_one_hits(tmp_path):
    """Inductor on the CPU twice with one cache directory: the first run compiles (FX-graph
    misses, kernels, stage times), the second finds its graphs in the cache."""
    job = tmp_path / "job.py"
    job.write_text(CACHE_JOB)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    ledgers = []
    for name in ("cold", "warm"):
        out = tmp_path / f"{name}.jsonl"
        subprocess.run([sys.executable, str(job), str(out)], env=env, check=True, timeout=600)
        ledgers.append(read_run(str(out))["step"][0]["compiled"])
    cold, warm = ledgers
    assert cold["fx_cache_misses"] >= 1 and cold["fx_cache_hits"] == 0
    assert warm["fx_cache_hits"] >= 1 and warm["fx_cache_misses"] == 0
    assert cold["kernels"] >= 1
    assert cold["inductor_ms"] > 0 and cold["dynamo_ms"] > 0
    assert cold["kernel_compile_ms"] > warm["kernel_compile_ms"]
