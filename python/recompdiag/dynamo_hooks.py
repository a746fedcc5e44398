"""What torch.compile tells Python and not C++: how long each compile took (dynamo's compile
callbacks) and why a frame recompiled (its guard failures), handed to the Monitor. The counts
(lookups, compiled-region runs, compiles, eager fallbacks) come from the C++ probe.

Dynamo has no public hook for recompile reasons: the reasons are read by wrapping
`torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reasons` (torch 2.x), and the
recompile-limit cliff from dynamo's own warning. Where a torch lacks them, the counts still come;
the reasons say "unknown"."""

from __future__ import annotations

import logging
import time
from typing import Any


class DynamoHooks:
    def __init__(self, monitor: Any) -> None:
        self._monitor = monitor
        self._t0 = None
        self._installed: list = []
        try:
            import torch._dynamo.callback as callback
            import torch._dynamo.convert_frame as convert_frame
        except ImportError:  # torch 1.x: no dynamo, nothing to hook
            return
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

        limit = _LimitWarnings(self)
        logger = logging.getLogger("torch._dynamo.convert_frame")
        logger.addHandler(limit)
        self._installed.append(lambda: logger.removeHandler(limit))

    def remove(self) -> None:
        for undo in reversed(self._installed):
            undo()
        self._installed.clear()

    # dynamo's compile callbacks: the outermost start and end of a compile
    def _compile_start(self, *args: Any) -> None:
        self._monitor._compiling()
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
        if not failures:
            text = "unknown guard failure"
        elif len(failures) == 1:
            text = failures[0]
        else:
            older = len(failures) - 1
            text = (f"{failures[0]} (the frame's {older} older compiled "
                    f"version{'' if older == 1 else 's'} failed {'its' if older == 1 else 'theirs'}"
                    f" too)")
        self._monitor.note_event(
            "compile",
            f"torch.compile recompiles {where}: guard failed: {text}",
            {"compiler": "dynamo", "function": code.co_name, "file": code.co_filename,
             "line": code.co_firstlineno, "guard_failures": failures},
        )


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
