"""Replaying a knowledge interview (core.flows.replaying): each recorded message through the real turn on
one interview; the key field of a turn is the interview's phase."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from core.debuglog.events import DebugEvent, DebugSink
from core.flows.chat_item import ChatItem
from core.flows.knowledge.stores import knowledge_stores
from core.flows.knowledge.turn import TurnInput, run_turn
from core.flows.replaying import Runner, last_key, parsed_value
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON


def knowledge_runner(engine: Engine, client: LLMClient, extras: Mapping[str, Any]) -> Runner:
    repo = knowledge_stores(engine, LOCAL_PERSON).interviews
    items: list[ChatItem] = []
    interview: dict[str, str | None] = {"id": None}

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        outcome = run_turn(
            items, TurnInput(text), interview_id=interview["id"], client=client, repo=repo, sink=sink
        )
        interview["id"] = outcome.interview_id

    return run


def phase(attempt: DebugEvent, result: DebugEvent | None) -> str:
    """The phase the interview turn moved to ("" when the call has none)."""
    parsed = parsed_value(attempt, result)
    state = parsed.get("state") if isinstance(parsed, dict) else None
    return str(state.get("phase", "")) if isinstance(state, dict) else ""


turn_keys = last_key(phase)
