"""recompdiag for PyTorch Lightning: a `Callback` that watches the run.

    from recompdiag.integrations.lightning import RecompdiagCallback
    trainer = lightning.Trainer(max_epochs=3, callbacks=[RecompdiagCallback(out="run.jsonl")])
    trainer.fit(module, data)

It makes the Monitor when training starts, with the LightningModule (whose model or
`training_step` may be compiled) and its first optimizer. A step is an optimizer step:
`accumulate_grad_batches`' micro-batches count once. The loss is what `training_step` returned,
summed on the device over the micro-batches: no host read of the callback's own. Epochs follow the
Trainer's. The run closes at the end of training, as failed (interrupted for a Ctrl-C) on an
exception. Under `recompdiag ab --a-cmd ... --b-cmd ...` the steps take their turns with no code
of yours."""

from __future__ import annotations

from typing import Any, Optional

try:
    from lightning.pytorch import Callback
except ImportError:  # the standalone package
    from pytorch_lightning import Callback

from ._session import MonitorSession


class RecompdiagCallback(Callback):
    """out: the run file; the other keyword arguments are recompdiag.Monitor's (mode, device,
    metrics, dispatcher_sample_every, ...)."""

    def __init__(self, out: Optional[str] = "run.jsonl", **monitor_options: Any) -> None:
        self._session = MonitorSession("RecompdiagCallback", out, monitor_options)
        self._step_at_begin = -1

    @property
    def monitor(self):
        """The recompdiag.Monitor once training began, else None."""
        return self._session.monitor

    def on_train_start(self, trainer, pl_module) -> None:
        optimizers = getattr(trainer, "optimizers", None) or [None]
        device = getattr(pl_module, "device", None)
        if device is not None and device.type != "cpu" and "device" not in self._session._options:
            self._session._options["device"] = device.type
        self._session.start(pl_module, optimizers[0])

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._session.set_epoch(trainer.current_epoch)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self._step_at_begin < 0:  # the first micro-batch of an optimizer step
            self._step_at_begin = trainer.global_step
            self._session.begin()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        self._session.add_loss(loss)
        if trainer.global_step != self._step_at_begin:  # the optimizer stepped
            self._step_at_begin = -1
            self._session.end()

    def on_train_end(self, trainer, pl_module) -> None:
        self._session.end()
        self._session.close("completed")

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        # The step the exception broke is no step: the run ends with the last one completed.
        self._session.close("interrupted" if isinstance(exception, KeyboardInterrupt) else "failed")
