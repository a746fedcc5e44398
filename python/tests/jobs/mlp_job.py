"""A small job of docs/python.md's loop: an MLP under torch.compile (aot_eager), whose first step
compiles (about 0.8 s) and whose other steps take under a millisecond.
`python mlp_job.py RUN_FILE [STEPS] [EPOCHS]`: EPOCHS epochs of STEPS/EPOCHS steps."""

import sys

import torch

import recompdiag

out = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 97
epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
forward = torch.compile(model, backend="aot_eager")
x, y = torch.randn(64, 16), torch.randn(64, 1)
monitor = recompdiag.Monitor(model, optimizer, out=out, mode="mlp")
per_epoch = max(1, steps // epochs)
for step in range(steps):
    if step % per_epoch == 0:
        monitor.set_epoch(step // per_epoch)
    with monitor.step(step) as s:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(forward(x), y)
        loss.backward()
        optimizer.step()
        s.loss = loss
monitor.close()
