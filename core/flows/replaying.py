"""What every flow declares for the workbench's replay (core.workbench.replay): a runner that sends a
recorded turn through the flow's real turn code on a given store, and the flow's key fields of a turn.

A runner is `run(user_input, turn_input, sink)`, keeping the conversation between turns exactly as the page
does; `turn_input` is the recorded request where the text alone cannot rebuild it (diagnosis buttons). A
factory builds one on an engine and a client; `extras` carries what one flow needs from the replay (the
manual search of diagnosis as "rag", the review a review-chat thread was about as "review").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.debuglog.events import DebugEvent, DebugSink
from core.llm.base import LLMClient

if TYPE_CHECKING:  # the registry imports this module at start-up; SQLAlchemy is not needed then
    from sqlalchemy import Engine

Runner = Callable[[str, dict[str, Any] | None, DebugSink], None]
Call = tuple[DebugEvent, DebugEvent | None]  # a call's last attempt and its result event
ReplayFactory = Callable[["Engine", LLMClient, Mapping[str, Any]], Runner]
TurnKeys = Callable[[Sequence[Call]], tuple[str, str]]


def deferred_factory(module: str, name: str) -> ReplayFactory:
    """`module.name` as a replay factory imported on first use: the registry is imported when the shell
    starts, and a flow's turn code (and the libraries it needs) only when a replay runs."""

    def factory(engine: Engine, client: LLMClient, extras: Mapping[str, Any]) -> Runner:
        built: Runner = getattr(importlib.import_module(module), name)(engine, client, extras)
        return built

    return factory


def deferred_keys(module: str, name: str) -> TurnKeys:
    """`module.name` as turn keys imported on first use (see deferred_factory)."""

    def keys(calls: Sequence[Call]) -> tuple[str, str]:
        found: tuple[str, str] = getattr(importlib.import_module(module), name)(calls)
        return found

    return keys


def parsed_value(attempt: DebugEvent, result: DebugEvent | None) -> Any:
    """What the call returned: the result event's parsed value, else the attempt's."""
    return result.parsed if result is not None and result.parsed is not None else attempt.parsed


def last_key(key_of: Callable[[DebugEvent, DebugEvent | None], str]) -> TurnKeys:
    """Turn keys from a per-call key: the last call of the turn that has one; no second key."""

    def keys(calls: Sequence[Call]) -> tuple[str, str]:
        key = ""
        for attempt, result in calls:
            key = key_of(attempt, result) or key
        return key, ""

    return keys


def no_keys(calls: Sequence[Call]) -> tuple[str, str]:
    """A flow compared on its text only."""
    return "", ""
