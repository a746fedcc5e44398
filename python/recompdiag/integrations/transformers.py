"""recompdiag for the Hugging Face Trainer: a `TrainerCallback` that watches the run.

    from recompdiag.integrations.transformers import RecompdiagCallback
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      callbacks=[RecompdiagCallback(out="run.jsonl")])
    trainer.train()

It makes the Monitor when training begins, with the Trainer's model (the module under its compiled
wrapper, with `torch_compile=True`) and its optimizer. A step is an optimizer step: gradient
accumulation's micro-steps count once. The loss is the tensor the Trainer's loop computed for each
micro-step (its `tr_loss_step`), summed on the device as the Trainer sums it for its log: no host
read of the callback's own. The lr is the optimizer's, as the Monitor reads it. Epochs follow the
Trainer's. The run closes at the end of training, and as failed when the process exits before
(an exception). Under torchrun each rank writes its own file, as the Monitor does. Under
`recompdiag ab --a-cmd ... --b-cmd ...` the steps take their turns with no code of yours."""

from __future__ import annotations

import sys
from typing import Any, Optional

from transformers import TrainerCallback

from ._session import MonitorSession

_LOSS = "tr_loss_step"  # the Trainer's loop's name for a micro-step's loss


class RecompdiagCallback(TrainerCallback):
    """out: the run file; the other keyword arguments are recompdiag.Monitor's (mode, device,
    metrics, dispatcher_sample_every, ...)."""

    def __init__(self, out: Optional[str] = "run.jsonl", **monitor_options: Any) -> None:
        self._session = MonitorSession("RecompdiagCallback", out, monitor_options)
        self._loss_found = None  # the Trainer's loop exposes its step loss (checked once)

    @property
    def monitor(self):
        """The recompdiag.Monitor once training began, else None."""
        return self._session.monitor

    def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
        if not args.device.type == "cpu" and "device" not in self._session._options:
            self._session._options["device"] = args.device.type
        self._session.start(model, optimizer)

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._session.set_epoch(int(state.epoch or 0))

    def on_step_begin(self, args, state, control, **kwargs):
        self._session.begin()

    def on_substep_end(self, args, state, control, **kwargs):
        self._session.add_loss(self._step_loss())

    def on_step_end(self, args, state, control, **kwargs):
        self._session.add_loss(self._step_loss())
        self._session.end()

    def on_train_end(self, args, state, control, **kwargs):
        self._session.end()
        self._session.close("completed")

    def _step_loss(self):
        """The loss tensor of the micro-step that just ran, as the Trainer's loop holds it: the
        nearest caller frame whose code has that local (`_run_epoch`, `_inner_training_loop`,
        as the version names its loop). The callback handler is two frames up."""
        if self._loss_found is False:
            return None
        frame = sys._getframe(2)
        for _ in range(8):
            if frame is None:
                break
            if _LOSS in frame.f_code.co_varnames:  # the code's locals: no frame dict built here
                loss = frame.f_locals.get(_LOSS)
                self._loss_found = True
                return loss
            frame = frame.f_back
        self._loss_found = False  # a Trainer without it: no loss, which the report says
        return None
