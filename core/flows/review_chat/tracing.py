"""Trace ids of the review chat: conversation = thread id, turn = the rally's number.

A new thread gets its id only when its first reply is stored (nothing is stored for a failed reply), so
the first turn's reply events wait in a `FirstTurnSink` until `finish_turn` knows the id, which is then
stamped on them before they go on to the page's sink. A failed first turn releases them without an id.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from core.debuglog import trace
from core.debuglog.events import DebugEvent, DebugSink
from core.flows.review_chat.constants import FLOW


def conversation_id(thread_id: int | None) -> str:
    """The trace's conversation id of a thread ("" before the thread exists)."""
    return str(thread_id) if thread_id is not None else ""


@contextmanager
def turn_trace(thread_id: int | None, turn: int, user_input: str) -> Iterator[trace.Trace]:
    """Bind the review flow, the thread and the turn for the calls of one turn."""
    with trace.bind(
        flow=FLOW, conversation_id=conversation_id(thread_id), turn=turn, user_input=user_input
    ) as bound:
        yield bound


class FirstTurnSink:
    """Holds a new thread's first-turn events until its id is known (`release`), then forwards them."""

    def __init__(self, inner: DebugSink):
        self.inner = inner
        self.events: list[DebugEvent] = []

    def emit(self, event: DebugEvent) -> None:
        self.events.append(event)

    def release(self, thread_id: int | None) -> None:
        """Forward the held events, stamped with the thread's conversation id when there is one."""
        held, self.events = self.events, []
        for event in held:
            if thread_id is not None and not event.conversation_id:
                event = replace(event, conversation_id=conversation_id(thread_id))
            self.inner.emit(event)
