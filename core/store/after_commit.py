"""Work that must wait until a transaction has committed: the vector writes of the rows it stores.

A vector written inside the transaction exists before its row does (for other connections), and stays if the
transaction rolls back; a reconcile on another replica would see a vector without a row and delete it, or a
rolled-back row would leave its vector behind. `begin_then(engine)` opens a transaction whose registered
work (`after_commit(conn, work)`) runs once it has committed, in order, and never when it rolled back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine

PENDING = "katachi_after_commit"  # Connection.info key of the work registered in the open transaction


@contextmanager
def begin_then(engine: Engine) -> Iterator[Connection]:
    """engine.begin(), then the work registered with `after_commit` once the commit succeeded."""
    pending: list[Callable[[], Any]] = []
    with engine.begin() as conn:
        conn.info[PENDING] = pending
        try:
            yield conn
        finally:
            conn.info.pop(PENDING, None)
    for work in pending:
        work()


def after_commit(conn: Connection, work: Callable[[], Any]) -> None:
    """Run `work` after the commit of `conn`'s transaction when it was opened by `begin_then`; at once
    otherwise (a caller that manages its own transaction)."""
    pending = conn.info.get(PENDING)
    if pending is None:
        work()
        return
    pending.append(work)


def waits_for_commit(conn: Connection) -> bool:
    """Whether work registered on `conn` now waits for its commit (opened by `begin_then`) or runs at once."""
    return conn.info.get(PENDING) is not None
