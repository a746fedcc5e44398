"""A Lightning job of a small MLP whose `training_step` is compiled, watched by
RecompdiagCallback: `python lightning_job.py RUN_FILE [float|tensor] [EPOCHS] [ACCUMULATE]`.
`float` scales the loss by a Python float that changes every epoch (a constant of the compiled
graph: one recompile per epoch); `tensor` holds it in a 0-dim tensor filled in place."""

import sys

import torch
import torch._dynamo

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl

from recompdiag.integrations.lightning import RecompdiagCallback

out = sys.argv[1]
kind = sys.argv[2] if len(sys.argv) > 2 else "float"
epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
accumulate = int(sys.argv[4]) if len(sys.argv) > 4 else 1
torch.manual_seed(0)


class Module(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, 1))
        self.scale = 1.0 if kind == "float" else torch.tensor(1.0)
        self.step_loss = torch.compile(self._step_loss, backend="eager", dynamic=False)

    def _step_loss(self, x, y, scale):
        return scale * torch.nn.functional.mse_loss(self.net(x), y)

    def training_step(self, batch, batch_idx):
        return self.step_loss(batch[0], batch[1], self.scale)

    def on_train_epoch_start(self):
        if kind == "float":
            self.scale = 1.0 / (1 + self.current_epoch)
        else:
            self.scale.fill_(1.0 / (1 + self.current_epoch))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


x, y = torch.randn(64, 16), torch.randn(64, 1)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)
trainer = pl.Trainer(max_epochs=epochs, accumulate_grad_batches=accumulate, accelerator="cpu",
                     logger=False, enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False,
                     callbacks=[RecompdiagCallback(out=out, warmup_steps=2)])
trainer.fit(Module(), data)
