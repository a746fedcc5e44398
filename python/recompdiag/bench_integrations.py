"""What a framework callback costs a step: the Hugging Face Trainer or Lightning, training a tiny
model, with RecompdiagCallback against without it, in one run.

One training run of rounds x 2 x --steps optimizer steps. A switch callback forwards the
framework's events to one RecompdiagCallback (its Monitor made at the start, as in a training run)
during the "callback" blocks and to nothing during the "none" blocks; each round runs a block of
each, in alternating order. A step's time is from one step's first event to the next's, as the
framework's first callback sees it: the framework's whole step, the callback's own work included.
Each round's mean step time with the callback over its mean without is one paired ratio; the
ratio and its interval come from the rounds by the C++ bench's test (Yuen's trimmed paired test,
recompdiag._core.arm_ratio), as `python -m recompdiag.bench_overhead` judges its arms. The first
round is warm-up, left out.

    python -m recompdiag.bench_integrations --framework transformers --rounds 40
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

import torch

from . import _core


class Blocks:
    """Which arm a step is in, and each step's time, by arm and round."""

    def __init__(self, rounds: int, steps: int) -> None:
        self.steps = steps
        self.arms = []
        for r in range(rounds):
            self.arms += ["none", "callback"] if r % 2 == 0 else ["callback", "none"]
        self.times = {"none": [[] for _ in range(rounds)], "callback": [[] for _ in range(rounds)]}
        self._t = None
        self._step = 0

    def total_steps(self) -> int:
        return len(self.arms) * self.steps

    def arm(self) -> str:
        return self.arms[min(self._step // self.steps, len(self.arms) - 1)]

    def tick(self) -> None:
        """The start of a step: the previous step's time goes to its arm and round."""
        now = time.perf_counter()
        if self._t is not None:
            k = self._step - 1
            block = k // self.steps
            if block < len(self.arms):
                self.times[self.arms[block]][block // 2].append((now - self._t) * 1e3)
        self._t = now

    def next_step(self) -> None:
        self._step += 1

    def means(self, arm: str):
        return [statistics.fmean(t) for t in self.times[arm][1:] if t]  # round 0: warm-up


def transformers_run(blocks: Blocks, out: str) -> None:
    from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                              TrainingArguments)

    from .integrations.transformers import RecompdiagCallback

    inner = RecompdiagCallback(out=out, log_alerts=False)

    class Switch(TrainerCallback):
        def on_train_begin(self, *a, **k):
            inner.on_train_begin(*a, **k)

        def on_step_begin(self, *a, **k):
            blocks.tick()
            if blocks.arm() == "callback":
                inner.on_step_begin(*a, **k)

        def on_step_end(self, *a, **k):
            if blocks.arm() == "callback":
                inner.on_step_end(*a, **k)
            blocks.next_step()

        def on_train_end(self, *a, **k):
            blocks.tick()
            inner.on_train_end(*a, **k)

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=64, n_positions=32))
    ids = torch.randint(0, 64, (blocks.total_steps() * 4, 32))
    data = [{"input_ids": row, "labels": row} for row in ids]
    args = TrainingArguments(output_dir=out + ".trainer", per_device_train_batch_size=4,
                             max_steps=blocks.total_steps(), report_to=[], logging_steps=10 ** 9,
                             save_strategy="no", use_cpu=True, dataloader_num_workers=0,
                             disable_tqdm=True)
    Trainer(model=model, args=args, train_dataset=data, callbacks=[Switch()]).train()


def lightning_run(blocks: Blocks, out: str) -> None:
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl

    from .integrations.lightning import RecompdiagCallback

    inner = RecompdiagCallback(out=out, log_alerts=False)

    class Switch(pl.Callback):
        def on_train_start(self, trainer, module):
            inner.on_train_start(trainer, module)

        def on_train_batch_start(self, trainer, module, batch, i):
            blocks.tick()
            if blocks.arm() == "callback":
                inner.on_train_batch_start(trainer, module, batch, i)

        def on_train_batch_end(self, trainer, module, outputs, batch, i):
            if blocks.arm() == "callback":
                inner.on_train_batch_end(trainer, module, outputs, batch, i)
            blocks.next_step()

        def on_train_end(self, trainer, module):
            blocks.tick()
            inner.on_train_end(trainer, module)

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                           torch.nn.Linear(64, 1))

        def training_step(self, batch, i):
            return torch.nn.functional.mse_loss(self.net(batch[0]), batch[1])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    torch.manual_seed(0)
    n = blocks.total_steps() * 16
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(n, 32), torch.randn(n, 1)), batch_size=16)
    pl.Trainer(max_steps=blocks.total_steps(), accelerator="cpu", logger=False,
               enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
               callbacks=[Switch()]).fit(Module(), data)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m recompdiag.bench_integrations",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--framework", choices=("transformers", "lightning"), required=True)
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--steps", type=int, default=10, help="steps per arm per round")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.rounds < 4 or args.steps < 3:
        p.error("--rounds takes at least 4, --steps at least 3")
    torch.set_num_threads(args.threads)
    blocks = Blocks(args.rounds, args.steps)
    with tempfile.TemporaryDirectory() as tmp:
        (transformers_run if args.framework == "transformers" else lightning_run)(
            blocks, tmp + "/run.jsonl")
    none, callback = blocks.means("none"), blocks.means("callback")
    r = _core.arm_ratio(none, callback)
    print(f"recompdiag bench integrations ({args.framework}, torch {torch.__version__}, "
          f"{args.threads} thread(s)): {args.rounds - 1} rounds x {args.steps} steps per arm")
    print(f"  step without the callback: mean {statistics.median(none):.3f} ms (median of rounds)")
    print(f"  RecompdiagCallback {r['ratio']:.3f}x (95% CI {r['low']:.3f}-{r['high']:.3f})"
          + (" interval includes 1.0" if r["includes_one"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
