"""What the framework callbacks share: a Monitor made late (when the framework has built its model
and optimizer), one optimizer step per Monitor step whatever the gradient accumulation, the step's
loss summed on the device from the micro-steps' loss tensors (no host read of its own: the
Monitor reads it once at step end, as its recorder's own read), and a run closed exactly once:
completed at the end of training, failed or interrupted on an exception or at exit. A model the
Monitor cannot watch, or a Monitor that fails, is said once and training goes on unmonitored."""

from __future__ import annotations

import atexit
import sys
import weakref
from typing import Any, Optional

import torch


class MonitorSession:
    """One training run's Monitor, driven by a framework's callback hooks."""

    def __init__(self, owner: str, out: Optional[str], monitor_options: dict) -> None:
        self._owner = owner
        self._out = out
        self._options = dict(monitor_options)
        self._monitor = None
        self._in_step = False
        self._loss = None  # the micro-steps' loss tensors summed, detached
        self._disabled = False
        self._closed = False
        # A run the framework never ends (an exception its callbacks do not see, a process that
        # exits) is closed at exit, as failed: its file then says it did not finish normally.
        ref = weakref.ref(self)
        self._atexit = lambda: (lambda s: s and s.close(_exit_status()))(ref())
        atexit.register(self._atexit)

    @property
    def monitor(self):
        """The Monitor, once training began (None before, and when it could not be made)."""
        return self._monitor

    def start(self, model: Any, optimizer: Any) -> None:
        """Makes the Monitor of `model` and `optimizer` (either may be None)."""
        if self._monitor is not None or self._disabled:
            return
        from ..monitor import Monitor

        if model is not None and not isinstance(model, torch.nn.Module):
            self._give_up(f"the model is a {type(model).__name__}, not a torch.nn.Module")
            return
        optimizer = getattr(optimizer, "optimizer", optimizer)  # Accelerate's wrapper
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            optimizer = None  # watched without its state: the compile probes still count
        try:
            self._monitor = Monitor(model, optimizer, out=self._out, **self._options)
        except Exception as e:  # noqa: BLE001 - any refusal: say it, train on
            self._give_up(str(e))

    def set_epoch(self, epoch: int) -> None:
        self._call(lambda m: m.set_epoch(int(epoch)))

    def begin(self) -> None:
        """The first micro-step of an optimizer step."""
        if self._in_step or self._monitor is None:
            return
        self._in_step = True
        self._loss = None
        self._call(lambda m: m.step_begin())

    def add_loss(self, loss: Any) -> None:
        """One micro-step's loss (a tensor, a number, or None), summed on its device."""
        if not self._in_step or loss is None:
            return
        if torch.is_tensor(loss):
            loss = loss.detach()
        self._loss = loss if self._loss is None else self._loss + loss

    def end(self) -> None:
        """The optimizer step is done: the Monitor's step ends, with the summed loss."""
        if not self._in_step:
            return
        self._in_step = False
        loss, self._loss = self._loss, None
        self._call(lambda m: m.step_end(loss))

    def close(self, status: str = "completed") -> None:
        """Ends the run (its summary line) once; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self._atexit)
        monitor, self._monitor = self._monitor, None
        if monitor is not None:
            try:
                monitor.close(status)
            except Exception as e:  # noqa: BLE001
                _say(f"{self._owner}: the run file could not be closed: {e}")

    # -- the Monitor's failures do not stop training ----------------------------------------
    def _call(self, action) -> None:
        if self._monitor is None:
            return
        try:
            action(self._monitor)
        except Exception as e:  # noqa: BLE001
            self._give_up(str(e))
            self.close("failed")

    def _give_up(self, why: str) -> None:
        if not self._disabled:
            _say(f"{self._owner} cannot monitor this run: {why}; training goes on unmonitored")
        self._disabled = True


def _say(line: str) -> None:
    print(f"recompdiag: warning: {line}", file=sys.stderr, flush=True)


def _exit_status() -> str:
    """How a run never ended by its framework ended: interrupted for a Ctrl-C, else failed."""
    last = getattr(sys, "last_type", None)
    return "interrupted" if last is not None and issubclass(last, KeyboardInterrupt) else "failed"
