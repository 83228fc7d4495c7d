"""A handler that keeps going after a failure says so (the exception policy in ARCHITECTURE.md): a warning
with the traceback in the log, and, when a debug sink is at hand, a note in the debug log of the current turn.
Call it inside the `except` block."""

from __future__ import annotations

import logging
import sys

from core.debuglog import trace
from core.debuglog.events import DebugEvent, DebugSink

STEP = "kept_going"


def kept_going(logger: logging.Logger, what: str, sink: DebugSink | None = None, *, step: str = STEP) -> None:
    """Log `what` (a short English phrase for operators) with the exception being handled, and emit a note
    event (ok False, error_type the exception's class) to `sink` under the current trace."""
    exc = sys.exc_info()[1]
    logger.warning("%s; carrying on", what, exc_info=exc is not None)
    if sink is None:
        return
    error_type = type(exc).__name__ if exc is not None else None
    sink.emit(
        DebugEvent(
            **trace.current().fields(),
            step=step,
            kind="note",
            ok=False,
            error_type=error_type,
            notes=[f"{what}; carrying on ({error_type})"],
        )
    )
