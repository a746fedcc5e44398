"""The seed's scenario under torch.compile: the C++ trainer's two-head GRU model, data, loss
weights, schedule and Keras-style ReduceLROnPlateau, trained by a compiled step, in two modes.

  recompile  loss weights and lr are Python floats: constants of the compiled graphs, so the phase
             switch and every plateau drop fail a guard and recompile (pytorch#107076, #163093).
  mutable    loss weights and lr are tensors, assigned in place: nothing recompiles.

    python -m recompdiag.seed --mode recompile --out a.jsonl
    recompdiag ab --a-cmd "python -m recompdiag.seed --mode recompile --out {out}" \\
                  --b-cmd "python -m recompdiag.seed --mode mutable --out {out}"

Faults (--fault), each with its healthy twin (the same run without --fault):
  lr-storm      the lr is a Python float whatever the mode; with --schedule decay --no-dynamic it
                changes every epoch: a recompile per epoch until dynamo's recompile limit, then
                the optimizer step runs eagerly (its twin holds the lr in a tensor)
  item-break    the step reads loss.item() to decide something: a graph break and a host sync
  shape-change  the sequence length changes every epoch: dynamic-shape recompiles

`python -m recompdiag.gallery` scores the diagnosis of each fault against its healthy twin.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import torch
import torch.nn.functional as F

from . import _core
from .monitor import Monitor

FAULTS = ("lr-storm", "item-break", "shape-change")
# The scenario's defaults, the C++ trainer's own (core/seed_scenario.h): model shape, data, phases.
SCENARIO = _core.seed_scenario()


class SeqModel(torch.nn.Module):
    """Input projection, GRU, a categorical and a binary head per time step (the C++ SeqModel)."""

    def __init__(self, input_size: int, hidden: int, num_classes: int) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(input_size, hidden)
        self.rnn = torch.nn.GRU(hidden, hidden, batch_first=True)
        self.cat = torch.nn.Linear(hidden, num_classes)
        self.bin = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        seq, _ = self.rnn(torch.relu(self.inp(x)))
        return self.cat(seq), self.bin(seq).squeeze(-1)


def make_batches(args, seq_len: int, generator: torch.Generator):
    """The C++ trainer's synthetic task: class = argmax of a projection of the current and previous
    input, binary = sign of another; valid lengths in [T/2, T], weights in [0.5, 1.5] on them."""
    n_in = args.input_size
    class_proj = torch.randn(2 * n_in, args.num_classes, generator=generator)
    bin_proj = torch.randn(2 * n_in, generator=generator)
    batches = []
    for _ in range(args.steps_per_epoch):
        x = torch.randn(args.batch_size, seq_len, n_in, generator=generator)
        prev = torch.cat([torch.zeros(args.batch_size, 1, n_in), x[:, :-1]], 1)
        both = torch.cat([x, prev], 2)
        y_cat = (both @ class_proj).argmax(-1)
        y_bin = (both @ bin_proj > 0).float()
        lengths = torch.randint(max(1, seq_len // 2), seq_len + 1, (args.batch_size, 1), generator=generator)
        valid = (torch.arange(seq_len).unsqueeze(0) < lengths).float()
        weight = valid * (0.5 + torch.rand(args.batch_size, seq_len, generator=generator))
        batches.append((x, y_cat, y_bin, weight))
    return batches


def make_steps(model, optimizer, item_break=False):
    """The seed's training step (the forward and the weighted two-head loss; `w` the loss weights,
    floats or a tensor) and optimizer step (Keras's clipvalue, then the optimizer), as plain
    functions for torch.compile. `item_break` plants the item-break fault."""
    params = list(model.parameters())
    clip = SCENARIO["clip_value"]

    def train_step(x, y_cat, y_bin, weight, w):
        logits, bin_logit = model(x)
        ce = F.cross_entropy(logits.transpose(1, 2), y_cat, reduction="none")
        bce = F.binary_cross_entropy_with_logits(bin_logit, y_bin, reduction="none")
        cells = weight.numel()
        cat_loss = (ce * weight).sum() / cells
        bin_loss = (bce * weight).sum() / cells
        loss = w[0] * cat_loss + w[1] * bin_loss
        if item_break and loss.item() > 1e3:  # the fault: a host read that breaks the graph
            loss = loss * 0.5
        return loss, cat_loss.detach(), bin_loss.detach()

    def optimizer_step():
        for p in params:  # Keras clipvalue: element-wise clipping
            p.grad.clamp_(-clip, clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    return train_step, optimizer_step


def compile_steps(steps, backend, dynamic=None, mode=None):
    """Both steps through torch.compile, the whole model compiled: without allow_rnn dynamo breaks
    the graph at the GRU and runs it eagerly (torch 2.x). `mode` is torch.compile's
    ("reduce-overhead": CUDA graphs through cudagraph trees, re-recorded for each new shape)."""
    dynamo_config = importlib.import_module("torch._dynamo").config
    if hasattr(dynamo_config, "allow_rnn"):
        dynamo_config.allow_rnn = True
    return tuple(torch.compile(f, backend=backend, dynamic=dynamic, mode=mode) for f in steps)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m recompdiag.seed", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("recompile", "mutable"), default="recompile")
    p.add_argument("--out", default="run.jsonl", help="run file to write")
    epochs = ",".join(str(phase["epochs"]) for phase in SCENARIO["phases"])
    p.add_argument("--epochs", default=epochs, help=f"epochs of phase 1 and phase 2 (default {epochs})")
    for name in ("steps_per_epoch", "batch_size", "seq_len", "input_size", "hidden", "num_classes"):
        p.add_argument("--" + name.replace("_", "-"), type=int, default=SCENARIO[name])
    p.add_argument("--backend", default="inductor", help="torch.compile backend (inductor, aot_eager, eager)")
    p.add_argument("--no-compile", action="store_true", help="train eagerly (no torch.compile)")
    p.add_argument("--compile-mode", default=None,
                   help="torch.compile's mode (reduce-overhead: CUDA graphs, re-recorded per shape)")
    p.add_argument("--device", default="cpu", help="where the model and the batches live (cpu, cuda)")
    p.add_argument("--fault", choices=FAULTS, help="plant one fault (see above)")
    p.add_argument("--schedule", choices=("plateau", "decay"), default="plateau",
                   help="lr schedule within a phase: Keras's ReduceLROnPlateau, or x0.9 every epoch")
    p.add_argument("--no-dynamic", action="store_true",
                   help="torch.compile(dynamic=False): no automatic dynamic shapes or floats")
    p.add_argument("--no-monitor", action="store_true", help="train without recompdiag")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=SCENARIO["seed"])
    p.add_argument("--metrics", help="serve Prometheus metrics on host:port")
    args = p.parse_args(argv)
    try:
        args.phase_epochs = [int(e) for e in args.epochs.split(",")]
        if len(args.phase_epochs) != 2 or min(args.phase_epochs) < 1:
            raise ValueError
    except ValueError:
        p.error(f"--epochs takes two positive counts, as 30,10 (got {args.epochs!r})")
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    phases = [(epochs, list(phase["loss_weights"]), phase["lr"])
              for epochs, phase in zip(args.phase_epochs, SCENARIO["phases"])]
    mutable = args.mode == "mutable"
    tensor_lr = mutable and args.fault != "lr-storm"
    device = torch.device(args.device)
    model = SeqModel(args.input_size, args.hidden, args.num_classes).to(device)
    model.rnn.flatten_parameters()  # cuDNN's one weight buffer (a no-op on the CPU)
    params = list(model.parameters())
    # Keras's Adam epsilon; lr as a tensor (mutable) or a float (recompile).
    optimizer = torch.optim.Adam(params, lr=torch.tensor(phases[0][2], device=device) if tensor_lr
                                 else phases[0][2], eps=SCENARIO["adam_epsilon"])
    loss_weights = torch.tensor(phases[0][1], device=device) if mutable else list(phases[0][1])
    train_step, optimizer_step = make_steps(model, optimizer, item_break=args.fault == "item-break")
    if not args.no_compile:
        train_step, optimizer_step = compile_steps((train_step, optimizer_step), args.backend,
                                                   dynamic=False if args.no_dynamic else None,
                                                   mode=args.compile_mode)

    monitor = None
    if not args.no_monitor:
        config = {k: v for k, v in vars(args).items() if k not in ("out", "metrics")}
        config["trainer"] = "python (recompdiag.seed)"
        monitor = Monitor(model, optimizer, args.out, mode=args.mode, config=config, seed=args.seed,
                          metrics=args.metrics, device=device.type)

    def set_lr(lr: float, why: str):
        for g in optimizer.param_groups:
            if tensor_lr:
                g["lr"].fill_(lr)
            else:
                g["lr"] = lr
        if monitor:
            monitor.set_requested_lr(lr)
            monitor.note_event("lr_change", why, {"lr": lr})

    step = 0
    start = time.monotonic()
    for phase, (epochs, weights, lr) in enumerate(phases, start=1):
        if monitor:
            # The C++ trainer's words and detail (reports read them alike).
            monitor.note_event("phase_start", f"phase {phase}: {epochs} epochs, loss weights "
                               f"[{weights[0]:g},{weights[1]:g}], lr {lr:g}",
                               {"epochs": epochs, "loss_weights": weights, "lr": lr, "phase": phase})
            monitor.set_loss_weights(weights)
        if phase > 1:
            if mutable:
                loss_weights.copy_(torch.tensor(weights, device=device))
            else:
                loss_weights = list(weights)
            if monitor:
                monitor.note_event("loss_weights_change", f"loss weights {weights}", {"loss_weights": weights})
        set_lr(lr, f"phase {phase} lr")
        plateau = _core.ReduceLrOnPlateau()  # the C++ trainer's, Keras's defaults
        current_lr = lr
        for epoch in range(epochs):
            seq_len = args.seq_len + (epoch % 3 if args.fault == "shape-change" else 0)
            if epoch == 0 or args.fault == "shape-change":  # on the device once, as the C++ trainer
                batches = [tuple(t.to(device) for t in b) for b in make_batches(args, seq_len, generator)]
            if monitor:
                monitor.take_turn()
                monitor.set_epoch(epoch)
            epoch_loss = 0.0
            for x, y_cat, y_bin, weight in batches:
                if monitor:
                    monitor.step_begin(step)
                loss, cat_loss, bin_loss = train_step(x, y_cat, y_bin, weight, loss_weights)
                loss.backward()  # AOTAutograd's compiled backward
                optimizer_step()
                if monitor:
                    monitor.step_end(loss.detach(), (cat_loss, bin_loss))
                epoch_loss += float(loss.detach())
                step += 1
            epoch_loss /= len(batches)
            if args.schedule == "decay":
                current_lr *= 0.9
                set_lr(current_lr, "per-epoch decay")
            else:
                new_lr = plateau.on_epoch_end(epoch_loss, current_lr)
                if new_lr is not None:
                    current_lr = new_lr
                    set_lr(current_lr, "ReduceLROnPlateau")
    if monitor:
        monitor.close()
    print(f"recompdiag.seed: {args.mode}{' fault ' + args.fault if args.fault else ''}: {step} steps in "
          f"{time.monotonic() - start:.1f} s" + (f", run file {args.out}" if monitor else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
