"""Trace ids of the diagnosis flow: conversation = diagnosis session id, turn = the request.

Every request of the page is one turn, numbered by the position of its (first) reply among the session's
assistant messages, as ratings number them (core.flows.feedback.reply_turns). The request's step span has an id fixed before any call: the interview's main call
("diagnosing") is made with that id as its call_id, and every other call of the request (summary,
rag_answer, urgency_check, spec_check, the diagnosing retries) hangs under it, also when it runs before the
main call or on the worker. A request without a main call (the urgency check after the last interview
turn, or a button that needs no model, e.g. the vehicle choice) ends with one "note" event carrying the span
id (step `diagnosis_step`), so its calls still have their step as parent in the debug tree and every request
is in the log. Every event of a request carries the request itself (trace `turn_input`, request_record), so
an export can be replayed (core.workbench.replay).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from core.debuglog import trace
from core.debuglog.events import DebugEvent, DebugSink
from core.flows.diagnosis.catalog import get_vehicle
from core.flows.diagnosis.constants import FLOW_TAG
from core.flows.diagnosis.models import ChatRequest, SessionState

SPAN_STEP = "diagnosis_step"


def turn_number(session: SessionState) -> int:
    """The 1-based turn of the next request: the position its reply will take among the session's assistant
    messages (the numbering ratings use, core.flows.feedback.reply_turns), i.e. the replies so far plus one."""
    return sum(1 for item in session.conversation_history if item.get("role") == "assistant") + 1


# What a form button's request shows as its input (its value is the form, not something a person reads).
FORM_LABELS = {"submit_booking": "予約情報を送信", "back": "予約方法の選択に戻る"}


def request_input(request: ChatRequest, session: SessionState | None = None) -> str:
    """What the person sent, as they saw it: the typed text, else the label of the button they pressed (the
    last prompt's choice with that value; the vehicle's name; a form: FORM_LABELS; else the value), or 「ターンNに戻る」."""
    if request.rewind_to_turn is not None:
        return f"ターン{request.rewind_to_turn}に戻る"
    typed = (request.message or "").strip()
    if typed:
        return typed
    if request.action in FORM_LABELS:
        return FORM_LABELS[request.action]
    vehicle = get_vehicle(request.action_value or "") if request.action == "select_vehicle" else None
    if vehicle is not None:
        return vehicle.label
    choices = (session.last_prompt.get("choices") or []) if session is not None else []
    label = next((c.get("label") for c in choices if c.get("value") == request.action_value), None)
    return str(label or request.action_value or "")


def request_record(request: ChatRequest) -> dict[str, Any]:
    """The request as the debug log keeps it (trace `turn_input`), enough to send it again (replay)."""
    return {
        "message": request.message,
        "action": request.action,
        "action_value": request.action_value,
        "rewind_to_turn": request.rewind_to_turn,
    }


def request_from_record(record: dict[str, Any], session_id: str | None = None) -> ChatRequest:
    """The ChatRequest `request_record` wrote, for the session `session_id`."""
    rewind = record.get("rewind_to_turn")
    return ChatRequest(
        session_id=session_id,
        message=str(record.get("message") or ""),
        action=record.get("action"),
        action_value=record.get("action_value"),
        rewind_to_turn=int(rewind) if rewind is not None else None,
    )


@dataclass
class StepSpan:
    """The step span of one request; `main_called` once the main call used its id; `calls` counts the
    model-call events that hung under it."""

    id: str
    main_called: bool = False
    calls: int = 0


_span: ContextVar[StepSpan | None] = ContextVar("katachi_diagnosis_span", default=None)


class _SpanSink:
    """Forwards to the page's sink, counting the call events of the span (whether a note is needed)."""

    def __init__(self, inner: DebugSink, span: StepSpan):
        self.inner, self.span = inner, span

    def emit(self, event: DebugEvent) -> None:
        if event.kind in ("call", "error") and event.parent_id == self.span.id:
            self.span.calls += 1
        self.inner.emit(event)


@contextmanager
def request_trace(
    session: SessionState, request: ChatRequest, sink: DebugSink | None
) -> Iterator[tuple[StepSpan, DebugSink | None]]:
    """Bind the flow, session, turn and input, with the step span as parent; yields the span and the sink
    to use for the request. On exit, a note carries the span when calls hung under it but no main call."""
    span = StepSpan(uuid.uuid4().hex[:12])
    wrapped = _SpanSink(sink, span) if sink is not None else None
    token = _span.set(span)
    with (
        trace.bind(
            flow=FLOW_TAG,
            conversation_id=session.session_id,
            turn=turn_number(session),
            user_input=request_input(request, session),
            turn_input=request_record(request),
        ) as bound,
        trace.child_of(span.id),
    ):
        try:
            yield span, wrapped
        finally:
            _span.reset(token)
    if sink is not None and not span.main_called:
        where = {**bound.fields(), "parent_id": ""}
        note = (
            f"この要求では問診の呼び出し（diagnosing）はなく、{span.calls} 件の呼び出しがこの手順の下にあります。"
            if span.calls
            else "この要求ではモデルの呼び出しはありませんでした（ボタンの選択など）。"
        )
        sink.emit(DebugEvent(**where, step=SPAN_STEP, kind="note", call_id=span.id, notes=[note]))


@contextmanager
def main_call() -> Iterator[str | None]:
    """Around the interview's main call: yields the span id to use as its call_id (None when the span's
    id is already used: a retry hangs under it instead) and lifts the call to the top of its turn."""
    span = _span.get()
    if span is None or span.main_called:
        yield None
        return
    span.main_called = True
    with trace.child_of(""):
        yield span.id
