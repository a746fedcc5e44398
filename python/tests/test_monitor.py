"""The Python Monitor on eager loops: run file, probes, optimizer and lr checks, recorder reads."""

import gc

import pytest
import torch

import recompdiag
from conftest import read_run


def small_loop(monitor, model, optimizer, steps, start=0, item_in_step=False):
    x = torch.randn(16, 4)
    y = torch.randn(16, 1)
    for step in range(start, start + steps):
        with monitor.step(step) as s:
            loss = torch.nn.functional.mse_loss(model(x), y)
            if item_in_step:
                _ = loss.item()  # a host read of the model's own
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            s.loss = loss
    return s


def test_run_file_has_header_steps_and_summary(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, run_file, mode="python-test", config={"k": 1}) as m:
        small_loop(m, model, opt, 5)
    run = read_run(run_file)
    header = run["run"][0]
    assert header["mode"] == "python-test"
    assert header["optimizer"] == "Adam"
    assert header["config"] == {"k": 1}
    assert header["torch_version"] == torch.__version__
    # C++ writes what every writer's header says alike: how steps are timed, where and when.
    assert header["step_timing"] == "host steady clock around the step"
    assert header["host"] and header["start_time"].endswith("Z")
    assert header["probes"]["dispatch"]["available"] and header["probes"]["compiled"]["available"]
    assert [s["step"] for s in run["step"]] == [0, 1, 2, 3, 4]
    last = run["step"][-1]
    assert last["optimizer"]["params"] == 2
    assert last["optimizer"]["params_with_state"] == 2
    assert last["optimizer"]["state_off_device"] == 0
    assert last["placement"]["params_off_device"] == 0
    assert last["dispatch"]["ops"] > 0
    assert last["loss"] > 0
    assert run["summary"][0]["steps"] == 5


def test_loss_read_is_the_recorders_and_item_is_the_models(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, run_file, compiled=False, log_alerts=False) as m:
        small_loop(m, model, opt, 3)
        small_loop(m, model, opt, 3, start=3, item_in_step=True)
    steps = read_run(run_file)["step"]
    assert all(s["dispatch"]["recorder_syncs"] >= 1 for s in steps)
    assert [s["dispatch"]["syncs"] > 0 for s in steps] == [False] * 3 + [True] * 3


def test_fresh_optimizer_is_a_state_reset(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, run_file, warmup_steps=2, log_alerts=False) as m:
        small_loop(m, model, opt, 4)
        fresh = torch.optim.Adam(model.parameters(), lr=0.01)
        m.set_optimizer(fresh)
        last = small_loop(m, model, fresh, 1, start=4)
    assert "optimizer_state_reset" in last.alerts
    steps = read_run(run_file)["step"]
    assert steps[3]["optimizer"]["step_max"] == 4
    assert steps[4]["optimizer"]["state_reset"] is True


def test_lr_not_in_effect(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, run_file, warmup_steps=0, log_alerts=False) as m:
        m.set_requested_lr(0.001)  # asked for, never set on the param groups
        first = small_loop(m, model, opt, 1)
        small_loop(m, model, opt, 1, start=1)
    assert "lr_not_in_effect" in first.alerts
    step = read_run(run_file)["step"][-1]
    assert step["optimizer"]["lr_requested"] == pytest.approx(0.001)
    assert step["optimizer"]["lr_effective"] == pytest.approx(0.01)


def test_tensor_lr_is_read(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.02))
    with recompdiag.Monitor(model, opt, run_file, log_alerts=False) as m:
        small_loop(m, model, opt, 2)
    assert read_run(run_file)["step"][-1]["lr"] == pytest.approx(0.02)


def test_bad_event_kind_is_an_input_error(run_file):
    with recompdiag.Monitor(None, None, run_file) as m:
        with pytest.raises(ValueError, match="unknown event kind 'bogus'"):
            m.note_event("bogus", "x")
        m.note_event("note", "still writing")
    events = read_run(run_file)["event"]
    assert [e["reason"] for e in events] == ["still writing"]


def test_unwritable_run_file_is_an_input_error(tmp_path):
    with pytest.raises(ValueError):
        recompdiag.Monitor(None, None, str(tmp_path / "missing" / "run.jsonl"))


def dispatch_counts(run_file, hook):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, run_file, compiled=False, log_alerts=False,
                            dispatcher_sample_every=1, dispatcher_hook=hook) as m:
        small_loop(m, model, opt, 2)
        small_loop(m, model, opt, 1, start=2, item_in_step=True)
    return [s["dispatch"] for s in read_run(run_file)["step"]]


def test_mode_key_hook_counts_what_record_function_counts(tmp_path):
    by_hook = {h: dispatch_counts(str(tmp_path / f"{h}.jsonl"), h)
               for h in ("record-function", "mode-key")}
    assert by_hook["mode-key"] == by_hook["record-function"]
    last = by_hook["mode-key"][-1]
    assert last["ops"] > 0 and last["syncs"] >= 1 and last["recorder_syncs"] >= 1


def test_mode_key_hook_needs_compiled_off(run_file):
    with pytest.raises(ValueError, match="needs compiled=False"):
        recompdiag.Monitor(None, None, run_file, dispatcher_hook="mode-key")


def test_unknown_dispatcher_hook_is_an_input_error(run_file):
    with pytest.raises(ValueError, match="dispatcher_hook: unknown hook 'profiler'"):
        recompdiag.Monitor(None, None, run_file, dispatcher_hook="profiler")


def test_compare_is_the_command_lines_comparison(tmp_path):
    """recompdiag.compare() runs the C++ comparison `recompdiag compare` and `ab` run
    (compare_run_paths) and returns its JSON report; bad input is one ValueError naming it."""
    paths = []
    for name in ("a", "b"):
        out = str(tmp_path / f"{name}.jsonl")
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        with recompdiag.Monitor(model, opt, out, mode=name, log_alerts=False) as m:
            for step in range(40):
                with m.step(step) as s:
                    opt.zero_grad()
                    loss = model(torch.ones(8, 4)).pow(2).mean()
                    loss.backward()
                    opt.step()
                    s.loss = loss
        paths.append(out)
    report = recompdiag.compare(paths[0], paths[1], fail_on=["compiles"])
    assert report["verdict"] in ("no_change", "inconclusive", "improvement", "regression")
    assert [p["phase"] for p in report["phases"]] == [1]
    assert report["options"]["fail_on"] == ["compiles"]
    with pytest.raises(ValueError, match="unknown count 'sinks'"):
        recompdiag.compare(paths[0], paths[1], fail_on=["sinks"])
    with pytest.raises(ValueError, match="nope.jsonl"):
        recompdiag.compare(str(tmp_path / "nope.jsonl"), paths[1])


def test_no_run_file_and_no_metrics_records_nowhere():
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with recompdiag.Monitor(model, opt, None, compiled=False) as m:
        s = small_loop(m, model, opt, 3)
    assert s.alerts == []


def test_a_monitor_never_closed_leaves_no_summary(run_file):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    m = recompdiag.Monitor(model, opt, run_file, compiled=False)
    small_loop(m, model, opt, 3)
    del m
    gc.collect()
    run = read_run(run_file)
    assert len(run["step"]) == 3
    assert run["summary"] == []  # a run that did not finish, not one that completed


def test_monitor_options_are_the_cpp_defaults_and_checks(run_file):
    """One default per option: a Monitor given nothing samples as MonitorOptions() does, and the
    options' own validate() refuses what the Monitor refuses."""
    defaults = recompdiag.MonitorOptions()
    steps = defaults.dispatcher_full_steps_after_event + 2 * defaults.dispatcher_sample_every
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with recompdiag.Monitor(model, opt, run_file, compiled=False, log_alerts=False) as m:
        small_loop(m, model, opt, steps)
    sampled = [s["step"] for s in read_run(run_file)["step"] if s["dispatch"]["sampled"]]
    steady = [s for s in sampled if s >= defaults.dispatcher_full_steps_after_event]
    assert steady and all(s % defaults.dispatcher_sample_every == 0 for s in steady)
    assert len(steady) < steps - defaults.dispatcher_full_steps_after_event

    defaults.dispatcher_sample_every = 0
    with pytest.raises(ValueError, match="dispatcher_sample_every must be >= 1, got 0"):
        defaults.validate()
    with pytest.raises(ValueError, match="dispatcher_sample_every must be >= 1, got 0"):
        recompdiag.Monitor(None, None, run_file, options=defaults)


def test_options_object_is_honoured_and_keywords_override_it(run_file):
    options = recompdiag.MonitorOptions()
    options.dispatcher = False
    options.warmup_steps = 0
    with recompdiag.Monitor(None, None, run_file, options=options, log_alerts=False) as m:
        assert m.probes["dispatch"]["available"] is False
        assert m.probes["compiled"]["available"] is True  # the keyword's default decides it
        for step in range(3):
            with m.step(step) as s:
                s.loss = torch.tensor(1.0)
    assert options.log_alerts is True  # the Monitor set its keywords on a copy
    assert all("dispatch" not in s for s in read_run(run_file)["step"])
    with recompdiag.Monitor(None, None, run_file, options=options, dispatcher=True,
                            log_alerts=False) as m:
        assert m.probes["dispatch"]["available"] is True


def test_a_parameter_added_mid_run_is_seen_within_a_refresh(run_file):
    """The placement probe reads the model's tensors from a cache refreshed every 25 steps, and at
    once after a noted event: a parameter added off the device shows within that many steps."""
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with recompdiag.Monitor(model, opt, run_file, compiled=False, log_alerts=False) as m:
        small_loop(m, model, opt, 3)
        model.extra = torch.nn.Linear(2, 2, device="meta")  # never used by forward
        small_loop(m, model, opt, 30, start=3)
        model.other = torch.nn.Linear(2, 2, device="meta")
        m.note_event("note", "a module added")
        small_loop(m, model, opt, 1, start=33)
    off = {s["step"]: s["placement"]["params_off_device"] for s in read_run(run_file)["step"]}
    assert all(off[s] == 0 for s in range(3))
    assert max(s for s in range(3, 33) if off[s] == 0) < 3 + 25  # seen within a refresh
    assert off[32] == 2
    assert off[33] == 4  # at once after the event


def test_a_model_moved_to_new_tensors_shows_within_a_refresh_buffers_included(run_file):
    """module.to("meta") replaces parameters and buffers with new tensors: the cache shows them
    within a refresh (25 steps). A move to CUDA sets param.data in place, which the cache sees at
    the next step (a kept parameter on another device); this machine has no second device."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    with recompdiag.Monitor(model, None, run_file, compiled=False, log_alerts=False) as m:
        for step in range(3):
            with m.step(step) as s:
                s.loss = model(torch.randn(8, 4)).sum().detach()
        model.to("meta")  # every parameter and buffer off the expected device
        for step in range(3, 30):
            with m.step(step) as s:
                s.loss = torch.tensor(1.0)
    placement = {s["step"]: s["placement"] for s in read_run(run_file)["step"]}
    assert placement[2]["params_off_device"] == 0 and placement[2]["buffers_off_device"] == 0
    seen = min(s for s in range(3, 30) if placement[s]["params_off_device"] == 4)
    assert seen < 3 + 25
    assert placement[seen]["buffers_off_device"] == 3  # running mean, variance and batch count


def test_the_options_device_is_kept_unless_the_keyword_says_one(run_file):
    options = recompdiag.MonitorOptions()
    options.expected_device = "cuda:1"
    with recompdiag.Monitor(None, None, run_file, options=options, log_alerts=False) as m:
        pass
    assert read_run(run_file)["run"][0]["device_requested"] == "cuda:1"
    with recompdiag.Monitor(None, None, run_file, options=options, device="cpu", log_alerts=False):
        pass
    assert read_run(run_file)["run"][0]["device_requested"] == "cpu"
