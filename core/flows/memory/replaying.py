"""Replaying a companion conversation (core.flows.replaying): each recorded message through the real chat
turn; the key field of a turn is the persona's affect from the reply's trailer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from core.debuglog.events import DebugEvent, DebugSink
from core.flows.chat_item import ChatItem, assistant_item, history, user_item
from core.flows.memory.chat import run_turn
from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.stores import memory_repository
from core.flows.memory.trailer import parse_trailer
from core.flows.replaying import Runner, last_key
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON


def memory_runner(engine: Engine, client: LLMClient, extras: Mapping[str, Any]) -> Runner:
    repo = memory_repository(engine, LOCAL_PERSON)
    items: list[ChatItem] = []

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        prior = history(items)
        _, outcome = run_turn(repo, None, client, [dict(i) for i in prior], text, sink=sink)
        items.append(user_item(text, status="done"))
        items.append(assistant_item(outcome.reply_text, status="done" if outcome.ok else "error"))

    return run


def affect(attempt: DebugEvent, _result: DebugEvent | None) -> str:
    """The persona's affect label in the reply's trailer ("" without one)."""
    if not attempt.raw or TRAILER_MARKER not in attempt.raw:
        return ""
    data, _ = parse_trailer(attempt.raw.rsplit(TRAILER_MARKER, 1)[1].strip())
    return str(data.get("persona_affect_label", "")) if data else ""


turn_keys = last_key(affect)
