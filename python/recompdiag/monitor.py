"""The Python face of the C++ Monitor: a step context, events, and torch.compile's own reports
(compile time, each recompile's guard failure) handed to the torch.compile probe."""

from __future__ import annotations

import copy
import json
import os
import time
from typing import Any, Iterable, Optional

import torch

from . import _core
from ._core import MonitorOptions
from .dynamo_hooks import DynamoHooks


class Step:
    """One step in progress: set `loss` (a tensor or a number) and, when the model has several
    heads, `head_losses`; read `alerts` after the step ends."""

    def __init__(self) -> None:
        self.loss: Any = None
        self.head_losses: Iterable[Any] = ()
        self.alerts: list[str] = []


class Monitor:
    """Watches a Python training loop.

    model, optimizer: the torch.nn.Module and torch.optim.Optimizer to inspect at each step end
        (placement, optimizer state and lr); either may be None.
    out: the run file to write (JSON Lines, as the C++ trainer writes); None writes none.
    mode: the run's label in reports ("recompile", "mutable", or your own).
    device: the device the model is meant to train on ("cpu", "cuda"); None keeps
        `options.expected_device` ("cpu" by default).
    metrics: "host:port" to serve Prometheus metrics on, or None.
    compiled: count torch.compile's work per step (section `compiled`); on by default in Python
        (the C++ default is off: C++ loops do not run torch.compile). This keyword decides it,
        whatever `options.compiled` says.
    options: a MonitorOptions for everything else a Monitor can be told (its defaults are the C++
        probes::MonitorOptions' own, and its checks MonitorOptions.validate()); the keywords here,
        when given, are set on a copy of it. A keyword left None keeps the options' value.
    dispatcher_sample_every: observe ops and dynamo's scopes every Nth step (and every step for a
        while after a compile or a phase start, and any step that compiles): an observed step
        costs LibTorch a RecordFunction per op (about 10% of a small CPU step), others nothing.
        Default: MonitorOptions().dispatcher_sample_every.
    dispatcher_hook: how an observed step's ops are seen: "record-function" (what "auto", the
        default, is in Python) or "mode-key", a dispatcher fallback on a mode key, as
        `__torch_dispatch__` modes use, which costs less per op (and is "auto" in a C++ loop).
        Only the thread that calls step_begin (and autograd's threads for that step's backward)
        is seen. It needs compiled=False and a loop without torch.compile: the
        key is in the thread's dispatch keys on observed steps only, and torch.compile's guards
        check those keys, so each compiled frame would compile again when sampling turns it off.
    config: your run's configuration, kept in the run file's header.
    rank, world_size: this process's place in a data-parallel job; by default RANK and WORLD_SIZE
        as torchrun sets them. A rank of a job of two or more writes its own file, `out` with
        ".rank{rank}" before ".jsonl", with the job's id in its header; `compare` reads the rank
        files as one job. Call `watch_ddp(model)` to time its all-reduces: the job report then
        names the rank the others waited for.
    job_id: the id every rank of the job shares; by default torchrun's run id, else
        MASTER_ADDR:MASTER_PORT (give one when several jobs share a rendezvous address).
    """

    def __init__(
        self,
        model: Optional[torch.nn.Module] = None,
        optimizer: Optional[torch.optim.Optimizer] = None,
        out: Optional[str] = "run.jsonl",
        *,
        mode: str = "python",
        device: Optional[str] = None,
        metrics: Optional[str] = None,
        compiled: bool = True,
        dispatcher: Optional[bool] = None,
        dispatcher_sample_every: Optional[int] = None,
        dispatcher_hook: Optional[str] = None,
        warmup_steps: Optional[int] = None,
        log_alerts: Optional[bool] = None,
        options: Optional[MonitorOptions] = None,
        config: Optional[dict] = None,
        seed: int = 0,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        job_id: Optional[str] = None,
    ) -> None:
        rank = int(os.environ.get("RANK", 0)) if rank is None else rank
        world_size = int(os.environ.get("WORLD_SIZE", 1)) if world_size is None else world_size
        job = world_size > 1
        if job and out:
            out = _core.rank_file_path(out, rank)
        o = _options(options, device=device, job=job, compiled=compiled, dispatcher=dispatcher,
                     dispatcher_sample_every=dispatcher_sample_every, dispatcher_hook=dispatcher_hook,
                     warmup_steps=warmup_steps, log_alerts=log_alerts)
        device = o.expected_device
        header = {
            "mode": mode,
            "optimizer_handoff": "none",
            "optimizer": type(optimizer).__name__ if optimizer is not None else "",
            "device_requested": device,
            "device_used": device,
            "torch_version": torch.__version__,
            "cuda_available": torch.cuda.is_available(),
            "config": config or {},
            "seed": seed,
        }
        if job:
            header.update({"rank": rank, "world_size": world_size, "job_id": job_id or _job_id()})
        if o.compiled:
            header["probes"] = DynamoHooks.availability()
        self._run = _core.Run(model, optimizer, out or "", json.dumps(header), o, metrics or "")
        self._optimizer = optimizer
        self._step = 0
        self._loss_weights: list[float] = []
        self._hooks = DynamoHooks(self) if o.compiled else None

    # -- steps ---------------------------------------------------------------------------------
    def step_begin(self, step: Optional[int] = None) -> None:
        """Marks the start of a step (`step`: the global step; default the next one)."""
        if step is not None:
            self._step = step
        self._run.begin_step(self._step)
        self._t0 = time.perf_counter()

    def step_end(self, loss: Any = None, head_losses: Iterable[Any] = (), lr: Any = None) -> list[str]:
        """Ends the step: reads the losses (tensors are read here, as the recorder's reads),
        runs the probes and health rules, writes the step. Returns the rules that fired."""
        self._run.planted_work()  # `recompdiag calibrate`'s planted slowdown, inside the step
        wall_ms = (time.perf_counter() - self._t0) * 1e3
        if self._hooks is not None:
            self._hooks.flush()
        alerts = self._run.end_step(loss, list(head_losses), self._loss_weights, lr, wall_ms)
        self._step += 1
        return alerts

    def step(self, step: Optional[int] = None) -> "_StepContext":
        """`with monitor.step() as s: ...; s.loss = loss`: step_begin and step_end around a block."""
        return _StepContext(self, step)

    # -- what the loop tells ------------------------------------------------------------------
    def note_event(self, kind: str, reason: str, detail: Optional[dict] = None) -> None:
        """Notes an event at the current step: "compile" (its reason goes into compile alerts),
        "phase_start" (detail {"phase": n}), "lr_change", "loss_weights_change", "optimizer_rebuild",
        "note"."""
        self._run.note_event(kind, reason, json.dumps(detail or {}))

    def watch_ddp(self, model: torch.nn.Module) -> None:
        """Times the all-reduces of a DistributedDataParallel model: each bucket's, from issue to
        completion, goes into the step's `comm` section (collectives, bytes, wait_ms). Registers a
        DDP comm hook that averages the gradients over the model's own process group as DDP's
        default does; a model can have one comm hook. On Gloo the completion is the all-reduce's
        end; on NCCL it is when the work is queued on the stream, so wait_ms undercounts there.
        The hook's completions are chained in C++ and c10d's threads release nothing Python after
        DDP has its result, so the job can end straight after its last backward."""
        import torch.distributed as dist

        process_group = getattr(model, "process_group", None)
        run = self._run

        # No annotations: DDP checks a hook's against dist.GradBucket and Future, and this
        # module's are strings (from __future__ import annotations).
        def timed_allreduce(state, bucket):  # noqa: ANN001
            group = state if state is not None else dist.group.WORLD
            buffer = bucket.buffer()
            buffer.div_(group.size())  # the mean over the ranks, as torch's allreduce_hook
            return run.time_collective(
                buffer.numel() * buffer.element_size(),
                lambda: dist.all_reduce(buffer, group=group, async_op=True))

        model.register_comm_hook(process_group, timed_allreduce)

    def set_epoch(self, epoch: int) -> None:
        """The epoch of the steps from now on (0 until set): with `ab --turn-every 0`, the turns."""
        self._run.set_epoch(epoch)

    def set_loss_weights(self, weights: Iterable[float]) -> None:
        """The loss weights in effect, recorded with each step."""
        self._loss_weights = [float(w) for w in weights]

    def set_requested_lr(self, lr: float) -> None:
        """The lr you mean to be in effect, checked against every param group at each step."""
        self._run.set_requested_lr(float(lr))

    def set_model(self, model: torch.nn.Module) -> None:
        """Inspects another model from the next step on (one given at construction)."""
        self._run.set_model(model)

    def set_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """Inspects another optimizer from the next step on (e.g. rebuilt after a recompile): a
        fresh one shows as a state reset, its step counters having fallen."""
        self._optimizer = optimizer
        self._run.set_optimizer(optimizer)

    def take_turn(self) -> None:
        """Waits for this run's turn under `recompdiag ab --a-cmd ... --b-cmd ... --turn-every 0`
        (call at epoch boundaries); returns at once otherwise, and under the default
        `--turn-every N`, where each N-th step() takes the turn itself."""
        self._run.take_turn()

    @property
    def probes(self) -> dict:
        """Probe name -> {"available": bool, "reason": str}."""
        return json.loads(self._run.probes())

    @property
    def metrics_url(self) -> str:
        return self._run.metrics_url()

    def close(self, status: str = "completed") -> None:
        """Writes the run's summary line. Called by `with Monitor(...)`; a Monitor never closed
        leaves its run file without one, which reports read as a run that did not finish."""
        if self._hooks is not None:
            self._hooks.remove()
            self._hooks = None
        self._run.close(status)

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close("completed" if exc_type is None else ("interrupted" if exc_type is KeyboardInterrupt else "failed"))

    # -- for DynamoHooks -----------------------------------------------------------------------
    def _add_compile_time(self, ms: float) -> None:
        self._run.add_compile_time(ms)

    def _add_ledger(self, fields: dict) -> None:
        self._run.add_compile_ledger(fields)

    def _compiling(self) -> None:
        self._run.observe_compile()


def _options(options: Optional[MonitorOptions], *, device: Optional[str], job: bool,
             compiled: bool, **keywords: Any) -> MonitorOptions:
    """The MonitorOptions a Monitor runs with: a copy of `options` (or the C++ defaults), what the
    Python loop knows (the device, a data-parallel rank's collectives, CUDA kernels on CUDA,
    whether it runs torch.compile), and the keywords given. Checked by validate()."""
    o = copy.copy(options) if options is not None else MonitorOptions()
    if device is not None:
        o.expected_device = device
    o.cupti = o.cupti and o.expected_device.startswith("cuda")
    o.comm = job
    o.compiled = compiled
    for name, value in keywords.items():
        if value is not None:
            setattr(o, name, value)
    o.validate()
    return o


def _job_id() -> str:
    """One id for every rank of a job, from the launcher's environment alone (no collective: a
    Monitor may be built on some ranks only): torchrun's run id, else the rendezvous address."""
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
    if run_id and run_id != "none":
        return run_id
    return f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:{os.environ.get('MASTER_PORT', '29500')}"


class _StepContext:
    def __init__(self, monitor: Monitor, step: Optional[int]) -> None:
        self._monitor = monitor
        self._index = step
        self._step = Step()

    def __enter__(self) -> Step:
        self._monitor.step_begin(self._index)
        return self._step

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._step.alerts = self._monitor.step_end(self._step.loss, self._step.head_losses)
