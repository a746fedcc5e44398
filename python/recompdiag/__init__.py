"""recompdiag for Python training loops: per-step compiles, cache misses, placement and optimizer
state, written as recompdiag run files that `recompdiag compare`, the reports and Grafana read.

    monitor = recompdiag.Monitor(model, optimizer, out="run.jsonl")
    for batch in data:
        with monitor.step() as step:
            loss = train_step(batch)
            step.loss = loss
    monitor.close()
"""

from ._core import InputError, version as __version__
from .monitor import Monitor, Step

__all__ = ["InputError", "Monitor", "Step", "__version__"]
