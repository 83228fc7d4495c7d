"""The one repository shape: a class over an engine and a clock (UTC epoch seconds); subclasses add queries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult, Engine

from core.clock import Clock, utc_now


class Repository:
    """Base of every flow's repository (`KnowledgeRepository(engine)`, `ReviewRepository(engine, clock)`, ...)."""

    def __init__(self, engine: Engine, clock: Clock = utc_now):
        self.engine = engine
        self.clock = clock

    def now(self) -> int:
        return self.clock()


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of a single-row insert."""
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])
