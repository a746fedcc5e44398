"""torch.compile's own counters, read as what changed since the last read: the compile ledger of
a step (graphs, graph breaks with their reasons, the FX-graph and AOTAutograd cache outcomes,
kernels generated, compile time by stage, cudagraph trees' skips).

The names on the right are torch's (`torch._dynamo.utils.counters` and
`compilation_time_metrics`, torch 2.x); the names on the left are fields of the run file's
`compiled` section (lib's record_fields.h), where the C++ side checks them. A counter this torch
lacks reads 0. The stages do not overlap: dynamo is its tracing without the backend, AOTAutograd
is the backend without Inductor's compile, Inductor is its compile without the C++ compile of its
kernels (torch's `compile_file`)."""

from __future__ import annotations

import sys
from typing import Callable

# field -> (counter group, counter name)
_COUNTS = {
    "graphs": ("stats", "unique_graphs"),
    "fx_cache_hits": ("inductor", "fxgraph_cache_hit"),
    "fx_cache_misses": ("inductor", "fxgraph_cache_miss"),
    "fx_cache_bypasses": ("inductor", "fxgraph_cache_bypass"),
    "aot_cache_hits": ("aot_autograd", "autograd_cache_hit"),
    "aot_cache_misses": ("aot_autograd", "autograd_cache_miss"),
    "aot_cache_bypasses": ("aot_autograd", "autograd_cache_bypass"),
    "cudagraph_skips": ("inductor", "cudagraph_skips"),
}

# field -> (seconds of torch's timer, minus seconds of the timers nested in it)
_STAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dynamo_ms": (("_compile.compile_inner",), ("OutputGraph.call_user_compiler",)),
    "aot_ms": (("create_aot_dispatcher_function", "backward._backward_impl"), ("compile_fx_inner",)),
    "inductor_ms": (("compile_fx_inner",), ("compile_file",)),
    "kernel_compile_ms": (("compile_file",), ()),
}


class CompileLedger:
    """Reads torch's counters into per-read deltas, and the reasons dynamo gave for the graph
    breaks since the read before (reason -> count), whose sum is the read's `graph_breaks`."""

    def __init__(self) -> None:
        from torch._dynamo import utils

        self._utils = utils
        self._last = self._totals()
        self._breaks = dict(utils.counters.get("graph_break", {}))

    def _totals(self) -> dict[str, float]:
        counters = self._utils.counters
        out: dict[str, float] = {}
        for field, (group, name) in _COUNTS.items():
            out[field] = counters.get(group, {}).get(name, 0)
        metrics = sys.modules.get("torch._inductor.metrics")  # loaded once Inductor is used
        out["kernels"] = getattr(metrics, "generated_kernel_count", 0) if metrics else 0
        times = self._utils.compilation_time_metrics
        seconds: Callable[[str], float] = lambda name: sum(times.get(name, ()))
        for field, (outer, inner) in _STAGES.items():
            out[field] = max(0.0, sum(map(seconds, outer)) - sum(map(seconds, inner))) * 1e3
        return out

    def read(self) -> tuple[dict[str, float], dict[str, int]]:
        """The fields that changed since the last read (field -> delta) and the new graph breaks'
        reasons. A counter that fell (torch._dynamo.reset()) starts again from its new value."""
        now = self._totals()
        delta = {}
        for field, value in now.items():
            d = value - self._last[field]
            d = value if d < 0 else d
            if d > 0:
                delta[field] = d
        self._last = now
        breaks = dict(self._utils.counters.get("graph_break", {}))
        if sum(breaks.values()) < sum(self._breaks.values()):
            self._breaks = {}  # torch._dynamo.reset() cleared them: count from zero
        new = {r: n - self._breaks.get(r, 0) for r, n in breaks.items() if n > self._breaks.get(r, 0)}
        self._breaks = breaks
        if new:  # the count is the reasons' sum: the events add up to it by construction
            delta["graph_breaks"] = sum(new.values())
        return delta, new


def graph_break_words(reason: str) -> tuple[str, list[str]]:
    """Dynamo's graph-break reason as its first line and its hints ("Hint: ..." lines)."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    first = lines[0] if lines else "unknown graph break"
    hints = [line[len("Hint:"):].strip() for line in lines if line.startswith("Hint:")]
    return first, hints
