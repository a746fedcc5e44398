"""The framework integrations: a Hugging Face Trainer and a Lightning job each trained through its
RecompdiagCallback in a process of its own (jobs/), with gradient accumulation, then reported on
and gated by the command line; and a model the callback cannot watch, said once while training
goes on."""

import json
import re
import os
import subprocess
import sys

import pytest

from conftest import read_run

JOBS = os.path.join(os.path.dirname(__file__), "jobs")
CLI = os.environ.get("RECOMPDIAG_CLI")


def job(name, out, *args, env=None):
    p = subprocess.run([sys.executable, os.path.join(JOBS, name), str(out), *map(str, args)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p


def report(path):
    if not CLI:
        pytest.skip("RECOMPDIAG_CLI not set (CTest sets it)")
    p = subprocess.run([CLI, "report", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_trainer_callback_counts_optimizer_steps_and_names_the_new_size(tmp_path):
    pytest.importorskip("transformers")
    out = tmp_path / "hf.jsonl"
    p = job("hf_job.py", out, "longest", 12, 2)
    run = read_run(out)
    # 12 optimizer steps of 2 micro-batches each: 12 steps, the loss of each recorded.
    assert len(run["step"]) == 12
    assert [s["step"] for s in run["step"]] == list(range(12))
    assert all(s["loss"] > 0 for s in run["step"])
    assert run["summary"][0]["status"] == "completed"
    compiles = [e for e in run["event"] if e["event"] == "compile"]
    assert compiles and {e["detail"].get("cause") for e in compiles} == {"new_size"}
    text = report(out)
    assert "A new size: `" in text and "Fix: mark the changing dimension dynamic" in text
    # The limit (4 in the job) reached: the eager cliff is named.
    assert "reached the recompile limit (4)" in text
    # The terminal: no more alert lines than alerts (the repeats of a rule and subject are counted
    # at the end: probes_test), each one guard long however many recompiles came before.
    alerts = sum(len(s.get("alerts", [])) for s in run["step"])
    printed = [l for l in p.stderr.splitlines() if l.startswith("recompdiag alert [")]
    assert 1 <= len(printed) <= alerts
    assert all(len(l) < 1500 for l in printed)
    assert all("older compiled version" not in l for l in printed)


def test_lightning_callback_counts_optimizer_steps_and_names_the_python_float(tmp_path):
    pytest.importorskip("lightning")
    out = tmp_path / "pl.jsonl"
    job("lightning_job.py", out, "float", 3, 2)
    run = read_run(out)
    # 8 batches an epoch, 2 per optimizer step: 4 steps an epoch, 3 epochs.
    assert len(run["step"]) == 12
    assert sorted({s["epoch"] for s in run["step"]}) == [0, 1, 2]
    assert all(s["loss"] > 0 for s in run["step"])
    assert run["summary"][0]["status"] == "completed"
    compiles = [e for e in run["event"] if e["event"] == "compile"]
    assert compiles and {e["detail"].get("cause") for e in compiles} == {"python_number"}
    assert "A Python number that changed: `_step_loss`" in report(out)


def test_lightning_callback_closes_a_failed_run(tmp_path):
    pytest.importorskip("lightning")
    out = tmp_path / "pl.jsonl"
    script = tmp_path / "fails.py"
    script.write_text(open(os.path.join(JOBS, "lightning_job.py")).read().replace(
        "        return self.step_loss(batch[0], batch[1], self.scale)",
        "        if self.global_step == 3:\n            raise RuntimeError('boom')\n"
        "        return self.step_loss(batch[0], batch[1], self.scale)"))
    p = subprocess.run([sys.executable, str(script), str(out), "tensor", "2"], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode != 0 and "boom" in p.stderr
    run = read_run(out)
    assert len(run["step"]) == 3
    assert run["summary"][0]["status"] == "failed"


def test_a_callback_that_cannot_monitor_says_so_once_and_training_goes_on(capsys):
    from recompdiag.integrations._session import MonitorSession

    s = MonitorSession("RecompdiagCallback", None, {})
    s.start("not a module", None)
    for _ in range(3):
        s.begin()
        s.add_loss(1.0)
        s.end()
    s.close()
    err = capsys.readouterr().err
    assert err.count("recompdiag: warning: RecompdiagCallback cannot monitor this run:") == 1
    assert "not a torch.nn.Module" in err
    s2 = MonitorSession("RecompdiagCallback", None, {"dispatcher_hook": "nonsense"})
    import torch
    s2.start(torch.nn.Linear(2, 2), None)
    assert s2.monitor is None
    s2.close()
    assert "cannot monitor this run" in capsys.readouterr().err


def test_ab_turns_through_the_trainer_callback_and_gates_the_padding(tmp_path):
    """No user code for turns: the callback's step marks take them. Padding to the longest
    sequence against a fixed 64: the recompiles fail the gate, and the first screen names the new
    size, the fix and the eager fallback."""
    pytest.importorskip("transformers")
    if not CLI:
        pytest.skip("RECOMPDIAG_CLI not set (CTest sets it)")
    hf = os.path.join(JOBS, "hf_job.py")
    p = subprocess.run([CLI, "ab", "--quiet", "--out-dir", str(tmp_path),
                        "--a-cmd", f"{sys.executable} {hf} {{out}} fixed 16",
                        "--b-cmd", f"{sys.executable} {hf} {{out}} longest 16"],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert "recompdiag alert" not in p.stderr  # --quiet: the sides' alert lines too
    first_screen = p.stdout.split("| Question |")[0]
    assert "B: A new size: `" in first_screen
    assert "Fix: mark the changing dimension dynamic" in first_screen
    assert "B: From step" in first_screen and "ran eagerly" in first_screen
    a = [json.loads(l) for l in open(tmp_path / "a.jsonl")]
    assert a[0]["turn_every_steps"] == 1


DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")

# What the reader brings before docs/python.md's framework blocks: a model, arguments and data.
HF_PREAMBLE = '''
import sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=32))
ids = torch.randint(0, 64, (16, 32))
data = [{"input_ids": row} for row in ids]
collate = lambda b: {"input_ids": torch.stack([x["input_ids"] for x in b]),
                     "labels": torch.stack([x["input_ids"] for x in b])}
args = TrainingArguments(output_dir=sys.argv[1] + ".trainer", per_device_train_batch_size=2,
                         max_steps=6, report_to=[], save_strategy="no", use_cpu=True,
                         disable_tqdm=True)
'''
LIGHTNING_PREAMBLE = '''
import sys
import torch
try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl


class Module(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.compile(torch.nn.Linear(8, 1), backend="eager")

    def training_step(self, batch, i):
        return torch.nn.functional.mse_loss(self.net(batch[0]), batch[1])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


module = Module()
data = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1)), batch_size=8)
'''


@pytest.mark.parametrize("framework", ["transformers", "lightning"])
def test_the_docs_framework_blocks_run_as_written(tmp_path, framework):
    pytest.importorskip(framework)
    text = open(DOC).read().split("## In a framework")[1].split("\n## ")[0]
    blocks = re.findall(r"```python\n(.*?)\n```", text, re.S)
    assert len(blocks) == 2, "docs/python.md's framework section has a block per framework"
    block = blocks[0] if framework == "transformers" else blocks[1]
    assert f"recompdiag.integrations.{framework}" in block
    script = tmp_path / "train.py"
    script.write_text((HF_PREAMBLE if framework == "transformers" else LIGHTNING_PREAMBLE) + block)
    out = tmp_path / "run.jsonl"
    p = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = read_run(out)
    assert len(run["step"]) == (6 if framework == "transformers" else 12)
    assert all(s["loss"] > 0 for s in run["step"])
    assert run["summary"][0]["status"] == "completed"
