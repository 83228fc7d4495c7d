"""The one repository shape: a class over an engine and a clock (UTC epoch seconds); subclasses add queries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, CursorResult, Engine, Integer

from core.clock import Clock, utc_now

# The column type of every UTC epoch-seconds time: BIGINT on PostgreSQL (a 4-byte INTEGER ends in 2038),
# INTEGER on SQLite (its integers are 8 bytes already; the declared type stays what older databases have).
EpochSeconds = BigInteger().with_variant(Integer(), "sqlite")


class Repository:
    """Base of every flow's repository (`KnowledgeRepository(engine)`, `ReviewRepository(engine, clock)`, ...)."""

    def __init__(self, engine: Engine, clock: Clock = utc_now):
        self.engine = engine
        self.clock = clock

    def now(self) -> int:
        return self.clock()


class OwnedRepository(Repository):
    """A repository of one person's rows: `owner_id` is required, and every read and write of
    the subclass is filtered by it, so no caller can forget to (`KnowledgeRepository(engine, owner_id=...)`)."""

    def __init__(self, engine: Engine, clock: Clock = utc_now, *, owner_id: str):
        super().__init__(engine, clock)
        if not owner_id:
            raise ValueError("a personal repository needs the id of the person it works for")
        self.owner_id = owner_id


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of a single-row insert."""
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])
