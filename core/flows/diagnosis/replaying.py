"""Replaying a diagnosis conversation (core.flows.replaying): each recorded request sent again through the
real service, and the turn's key fields (the interview's action, the urgency level) read from its events.

A diagnosis request is a typed text, a button (action and value) or a rewind; the debug log keeps it on
every event of the request (trace `turn_input`, core.flows.diagnosis.tracing.request_record), and the
runner rebuilds the same ChatRequest and hands it to `run_turn` (the page's entry, service.run_turn) on a
fresh session store, with the manual search it is given (the app's RAG service; None: without manuals,
as the page runs when Chroma fails). Summaries run inline (no worker), so a turn ends with its calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Engine

from core.debuglog.events import DebugEvent, DebugSink
from core.flows.diagnosis.deps import ManualSearch, open_deps
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.diagnosis.tracing import request_from_record
from core.flows.replaying import Runner
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON

ACTION_STEP, URGENCY_STEP = "diagnosing", "urgency_check"


def diagnosis_runner(engine: Engine, client: LLMClient, extras: Mapping[str, Any]) -> Runner:
    """A runner sending each recorded request (`turn_input`; a typed text when there is none) through
    `run_turn` of one session on `engine`, as the page does, searching `extras["rag"]` (None: no manuals)."""
    rag: ManualSearch | None = extras.get("rag")
    service = ChatService()
    session: dict[str, str | None] = {"id": None}

    def run(text: str, turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        request = request_from_record(turn_input or {"message": text}, session["id"])
        deps = open_deps(client, engine, LOCAL_PERSON, rag=rag, sink=sink)
        state, _ = run_turn(service, request, deps)
        session["id"] = state.session_id

    return run


def _parsed(attempt: DebugEvent, result: DebugEvent | None) -> dict[str, Any]:
    parsed: Any = result.parsed if result is not None and result.parsed is not None else attempt.parsed
    ok = result.ok if result is not None else attempt.ok
    return parsed if isinstance(parsed, dict) and ok else {}


def diagnosis_keys(calls: Iterable[tuple[DebugEvent, DebugEvent | None]]) -> tuple[str, str]:
    """The request's action (the interview call's `action`) and urgency level (the urgency check's
    `level`, else the interview call's `urgency_flag`) from its calls' last attempt and result; "" when
    the request had no such call or it failed."""
    action, urgency = "", dict[str, str]()
    for attempt, result in calls:
        parsed = _parsed(attempt, result)
        if attempt.step == ACTION_STEP:
            action = str(parsed.get("action") or "")
            urgency.setdefault(ACTION_STEP, str(parsed.get("urgency_flag") or ""))
        elif attempt.step == URGENCY_STEP:
            urgency[URGENCY_STEP] = str(parsed.get("level") or "")
    return action, urgency.get(URGENCY_STEP) or urgency.get(ACTION_STEP) or ""
