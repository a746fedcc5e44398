"""recompdiag for Python training loops: per-step compiles, cache misses, placement and optimizer
state, written as recompdiag run files that `recompdiag compare`, the reports and Grafana read.

    monitor = recompdiag.Monitor(model, optimizer, out="run.jsonl")
    for batch in data:
        with monitor.step() as step:
            loss = train_step(batch)
            step.loss = loss
    monitor.close()
"""

import json
import os
import sys
from typing import Iterable, Union

import torch  # first: it loads the LibTorch libraries that _core links against

from . import _build

if torch.__version__.split(".")[:2] != _build.TORCH_VERSION.split(".")[:2]:
    # _core would load another LibTorch's symbols and crash: say which torch it needs instead.
    raise ImportError(
        f"recompdiag was built against torch {_build.TORCH_VERSION}, but {sys.executable} "
        f"imports torch {torch.__version__} from {os.path.dirname(torch.__file__)}: run it in the "
        "environment it was built for, or install recompdiag into this one")

from ._core import InputError, MonitorOptions, compare_json as _compare_json, version as __version__
from .monitor import Monitor, Step


def compare(a: Union[str, Iterable[str]], b: Union[str, Iterable[str]], threshold: float = 5.0,
            turns: bool = False, fail_on: Iterable[str] = ()) -> dict:
    """Compares the run files of B against the baseline A, as `recompdiag compare` does (the same
    C++ code), and returns its JSON report as a dict: `report["verdict"]` is "no_change",
    "regression", "improvement" or "inconclusive". `turns`: one pair of runs that took turns
    (under `recompdiag ab`). `fail_on`: counts that fail the gate when B has more ("compiles",
    ...). Bad input raises InputError (a ValueError) naming the file or the option."""
    paths = lambda x: [x] if isinstance(x, str) else list(x)
    return json.loads(_compare_json(paths(a), paths(b), threshold, turns, list(fail_on)))


__all__ = ["InputError", "Monitor", "MonitorOptions", "Step", "compare", "__version__"]
