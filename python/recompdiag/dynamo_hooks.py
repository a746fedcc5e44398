"""What torch.compile tells Python and not C++: how long each compile took (dynamo's compile
callbacks), why a frame recompiled (its guard failures, with their known cause and fix), how much
of its recompile limit a frame has spent, and the compile ledger of each step that compiled
(compile_ledger.py), handed to the Monitor. The counts of compiled code run (lookups, compiled
regions, eager fallbacks) come from the C++ probe.

Dynamo has no public hook for recompile reasons: the reasons are read by wrapping
`torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reasons` (torch 2.x), and the
recompile-limit cliff from dynamo's own warning. Where a torch lacks them, the counts still come;
the reasons say "unknown"."""

from __future__ import annotations

import logging
import time
from typing import Any

from . import _core
from .compile_ledger import graph_break_words


class DynamoHooks:
    def __init__(self, monitor: Any) -> None:
        self._monitor = monitor
        self._t0 = None
        self._installed: list = []
        self._ledger = None
        self._compiled = dict.fromkeys(_TRIGGER_FIELDS.values(), 0)  # since the last flush
        self._dirty = False  # a compile started since the last flush
        self._frame_compiles = 0  # the most compiles of a frame that recompiled since the flush
        self._break_sites: dict = {}  # graph break's first line -> {site: count}, since the flush
        try:
            import torch._dynamo.callback as callback
            import torch._dynamo.convert_frame as convert_frame
        except ImportError:  # torch 1.x: no dynamo, nothing to hook
            return
        from .compile_ledger import CompileLedger

        self._ledger = CompileLedger()
        handler = callback.callback_handler
        handler.register_start_callback(self._compile_start)
        handler.register_end_callback(self._compile_end)
        self._installed.append(lambda: handler.remove_start_callback(self._compile_start))
        self._installed.append(lambda: handler.remove_end_callback(self._compile_end))

        original = getattr(convert_frame, "get_and_maybe_log_recompilation_reasons", None)
        if original is not None:
            hooks = self

            def reasons_and_report(cache_entries, frame, *args, **kwargs):
                reasons = original(cache_entries, frame, *args, **kwargs)
                hooks._recompiling(frame, reasons)
                return reasons

            convert_frame.get_and_maybe_log_recompilation_reasons = reasons_and_report
            self._installed.append(
                lambda: setattr(convert_frame, "get_and_maybe_log_recompilation_reasons", original)
            )

        self._hook_graph_break_sites()

        limit = _LimitWarnings(self)
        logger = logging.getLogger("torch._dynamo.convert_frame")
        logger.addHandler(limit)
        self._installed.append(lambda: logger.removeHandler(limit))

    def _hook_graph_break_sites(self) -> None:
        """Where each graph break happened in user code: dynamo's counters keep the reason only.
        Read from the exception dynamo logs the break with (its `real_stack`, else the frame being
        traced), by wrapping `InstructionTranslatorBase.log_graph_break` (torch 2.x); a torch
        without it records no sites."""
        try:
            from torch._dynamo.symbolic_convert import InstructionTranslatorBase as translator
        except ImportError:
            return
        original = getattr(translator, "log_graph_break", None)
        if original is None:
            return
        hooks = self

        def log_graph_break(tracer, *args, **kwargs):
            exc = kwargs.get("exc", args[2] if len(args) > 2 else None)
            logged = bool(getattr(exc, "logged", False))
            out = original(tracer, *args, **kwargs)
            if not logged:
                # The exception's own message is dynamo's counter key (the reason logged may have
                # "Encountered graph break when attempting to trace ..." before it).
                reason = getattr(exc, "msg", None) or kwargs.get(
                    "reason", args[1] if len(args) > 1 else str(exc))
                hooks._graph_break_site(str(reason), exc, tracer)
            return out

        translator.log_graph_break = log_graph_break
        self._installed.append(lambda: setattr(translator, "log_graph_break", original))

    def _graph_break_site(self, reason: str, exc: Any, tracer: Any) -> None:
        try:
            stack = getattr(exc, "real_stack", None)
            if stack:
                frame = stack[-1]
                site = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
            else:
                code = tracer.f_code
                site = f"{code.co_filename.rsplit('/', 1)[-1]}:{tracer.lineno} in {code.co_name}"
        except Exception:  # a frame we cannot read costs the site, never the training
            return
        first, _ = graph_break_words(reason)
        sites = self._break_sites.setdefault(first, {})
        sites[site] = sites.get(site, 0) + 1

    def remove(self) -> None:
        for undo in reversed(self._installed):
            undo()
        self._installed.clear()

    @staticmethod
    def availability() -> dict:
        """What the hooks can record in this process, as the run header's `probes` say it:
        {"compile_ledger": {...}, "cudagraphs": {...}}, each available or why not."""
        import torch

        try:
            import torch._dynamo.utils  # noqa: F401
            ledger = {"available": True, "reason": ""}
        except ImportError:
            ledger = {"available": False, "reason": f"unavailable: torch {torch.__version__} has no "
                      "torch._dynamo"}
        if torch.cuda.is_available():
            graphs = dict(ledger)
        else:
            graphs = {"available": False, "reason": "unavailable: no CUDA device; cudagraph trees "
                      "record CUDA graphs on a GPU only"}
        return {"compile_ledger": ledger, "cudagraphs": graphs}

    def flush(self) -> None:
        """Hands the ledger of what compiled since the last flush to the Monitor (at step end):
        nothing is read on a step that did not compile."""
        if not self._dirty or self._ledger is None:
            return
        self._dirty = False
        fields, breaks = self._ledger.read()
        fields.update({k: v for k, v in self._compiled.items() if v})
        self._compiled = dict.fromkeys(self._compiled, 0)
        fields["frame_compiles_max"] = self._frame_compiles
        fields["recompile_limit"] = _recompile_limit()
        self._frame_compiles = 0
        self._monitor._add_ledger(fields)
        for reason, count in breaks.items():
            first, hints = graph_break_words(reason)
            seen = self._break_sites.pop(first, {})
            sites = sorted(seen, key=lambda site: -seen[site])
            text = f"torch.compile graph break{'' if count == 1 else f' ({count})'}: {first}"
            if sites:
                text += f", at {', '.join(sites[:3])}"
            if hints:
                text += f"; hint: {hints[0]}"
            self._monitor.note_event("graph_break", text, {"compiler": "dynamo", "count": count,
                                                           "reason": first, "hints": hints,
                                                           "sites": sites})

    # dynamo's compile callbacks: the outermost start and end of a compile
    def _compile_start(self, *args: Any) -> None:
        self._monitor._compiling()
        self._dirty = True
        # torch 2.6 on: CallbackArgs(callback_trigger, compile_id). DYNAMO is a compile id; a
        # lazy backward compile is AOTAutograd's, under its forward's id; a CUDA-graph recording
        # is cudagraph trees'. Autotuning counts time only. Before 2.6: no argument, a compile.
        trigger = getattr(getattr(args[0], "callback_trigger", None), "name", "") if args else ""
        field = _TRIGGER_FIELDS.get(trigger or "DYNAMO")
        if field is not None:
            self._compiled[field] += 1
        self._t0 = time.perf_counter()

    def _compile_end(self, *args: Any) -> None:
        if self._t0 is not None:
            self._monitor._add_compile_time((time.perf_counter() - self._t0) * 1e3)
            self._t0 = None

    def _recompiling(self, frame: Any, reasons: list) -> None:
        code = frame.f_code
        where = f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"
        failures = [_guard_line(line) for reason in reasons
                    for line in str(reason).split("User stack trace")[0].splitlines() if line.strip()]
        # The newest compiled entry's failure first, as dynamo checks them; the older entries'
        # (one per earlier recompile) are in the event's detail, not in every alert's line.
        # A frame's cache entries are its compiles so far: this one makes one more, unless the
        # frame is at its limit, where dynamo refuses it (its warning is the cliff's note).
        limit = _recompile_limit()
        if limit and len(reasons) >= limit:
            return
        self._frame_compiles = max(self._frame_compiles, len(reasons) + 1)
        if not failures:
            text = "unknown guard failure"
        elif len(failures) == 1:
            text = failures[0]
        else:
            # The newest failure alone: the older versions' (one per earlier recompile) are in
            # the event's detail, and a line that grows with every recompile floods a terminal.
            text = f"{failures[0]} (and {len(failures) - 1} older)"
        detail = {"compiler": "dynamo", "function": code.co_name, "file": code.co_filename,
                  "line": code.co_firstlineno, "guard_failures": failures,
                  "frame_compiles": len(reasons) + 1, "recompile_limit": limit}
        cause = _core.recompile_cause(failures[0]) if failures else None
        reason = f"torch.compile recompiles {where}: guard failed: {text}"
        if cause is not None:
            detail.update(cause)
            upstream = f" ({cause['upstream']})" if cause["upstream"] else ""
            reason += f"; cause: {cause['what']}; fix: {cause['fix']}{upstream}"
        self._monitor.note_event("compile", reason, detail)


# dynamo's compile-callback trigger -> the ledger field it counts (None: time only)
_TRIGGER_FIELDS = {
    "DYNAMO": "compile_ids",
    "LAZY_BACKWARD": "backward_compiles",
    "CUDAGRAPH_RECORDING": "cudagraph_recordings",
}


def _recompile_limit() -> int:
    """Compiles of one frame after which dynamo runs it eagerly (recompile_limit; cache_size_limit
    before torch 2.6)."""
    import torch._dynamo.config as config

    return int(getattr(config, "recompile_limit", getattr(config, "cache_size_limit", 0)) or 0)


def _guard_line(line: str) -> str:
    """One guard failure as dynamo writes it ("3/0: w[0] == 0.7  # source line  # path:line in
    fn"), without the alignment padding and with the file's name for its path."""
    parts = " ".join(line.split()).split(" # ")
    if len(parts) > 2:
        parts[2] = parts[2].rsplit("/", 1)[-1]
    return " # ".join(parts)


class _LimitWarnings(logging.Handler):
    """Dynamo's warning when a frame reaches its recompile limit: from then on it runs eagerly."""

    def __init__(self, hooks: DynamoHooks) -> None:
        super().__init__(logging.WARNING)
        self._hooks = hooks

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a record we cannot format is not ours to report
            return
        if "recompile_limit" not in message and "cache_size_limit" not in message:
            return
        self._hooks._monitor._compiling()
        first = message.splitlines()
        detail = {"compiler": "dynamo", "message": message}
        self._hooks._monitor.note_event(
            "note", "torch.compile gave up recompiling and runs the frame eagerly: "
            + " ".join(line.strip() for line in first[:3]), detail)
