"""Where a model call sits in a conversation: flow, browser session, conversation, turn, parent.

The context travels with the code that runs a turn, not through every signature: a flow binds its
conversation and turn (`bind`), a follow-up call binds the call that caused it as its parent
(`child_of`), and the guard stamps the current context on every debug event it emits. Background jobs
keep the context they were submitted in (core.jobs.worker runs each job in a copy of the submitter's context).
Pure data, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Trace:
    """The trace fields every DebugEvent carries. `turn` is 1-based (0: not part of a numbered turn)."""

    session_id: str = ""
    flow: str = ""
    conversation_id: str = ""
    turn: int = 0
    parent_id: str = ""  # call_id of the call this one hangs under ("" at the top of its turn)
    user_input: str = ""  # what the person typed / chose for this turn (replay of an export re-sends it)
    # the request of the turn when the text alone cannot rebuild it (diagnosis: message, action,
    # action_value, rewind_to_turn); None for flows whose input is the text
    turn_input: dict[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        return asdict(self)


_current: ContextVar[Trace] = ContextVar("katachi_trace", default=Trace())  # noqa: B039 - frozen dataclass


def current() -> Trace:
    """The trace context of the running code (empty fields outside any binding)."""
    return _current.get()


@contextmanager
def bind(**fields: Any) -> Iterator[Trace]:
    """Run the block with some trace fields replaced (`session_id`, `flow`, `conversation_id`, `turn`,
    `parent_id`, `user_input`, `turn_input`); empty values ("" / None) leave the outer value in place."""
    changes = {k: v for k, v in fields.items() if v not in ("", None)}
    token = _current.set(replace(_current.get(), **changes))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


@contextmanager
def child_of(call_id: str) -> Iterator[Trace]:
    """Calls made in the block hang under `call_id` (a summary under the reply that triggered it)."""
    token = _current.set(replace(_current.get(), parent_id=call_id))
    try:
        yield _current.get()
    finally:
        _current.reset(token)
