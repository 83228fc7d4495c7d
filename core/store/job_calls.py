"""The model calls background jobs made, kept under the person they were made for: `job_calls`.

A person's debug log lives in their browser session; a job run by a worker (a replica's engine worker, a
`python -m core.jobs` process, or the sweep's owed work) has no session to write to, so its calls (redacted
debug events, one JSON line each) are rows here under the person's id, and the debug page adds the new ones to
the person's log when it opens (core.jobs.job_log writes them, Services.job_calls reads them). The newest
KEEP_PER_PERSON rows of each person are kept.
"""

from __future__ import annotations

from sqlalchemy import Column, Engine, Float, Index, Integer, String, Table, Text, delete, insert, select

from core.store.db import metadata
from core.store.owners import owner_column

KEEP_PER_PERSON = 2_000  # like the session log's MAX_EVENTS

job_calls = Table(
    "job_calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    owner_column(index=False),
    Column("job_id", String(64), nullable=False),
    Column("at", Float, nullable=False),  # the event's time (epoch seconds)
    Column("event", Text, nullable=False),  # one redacted debug event as a JSON line
    Index("ix_job_calls_owner", "owner_id", "id"),
)


def record_call(engine: Engine, owner_id: str, job_id: str, at: float, event_line: str) -> None:
    """Keep one event of a job under its person."""
    with engine.begin() as conn:
        conn.execute(insert(job_calls).values(owner_id=owner_id, job_id=job_id, at=at, event=event_line))


def calls_after(
    engine: Engine, owner_id: str, after_id: int = 0, limit: int = KEEP_PER_PERSON
) -> list[tuple[int, str]]:
    """The person's job events newer than row `after_id`, oldest first: (row id, JSON line)."""
    query = (
        select(job_calls.c.id, job_calls.c.event)
        .where(job_calls.c.owner_id == owner_id, job_calls.c.id > after_id)
        .order_by(job_calls.c.id)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [(int(i), str(e)) for i, e in conn.execute(query)]


def prune_calls(engine: Engine, owner_id: str, keep: int = KEEP_PER_PERSON) -> None:
    """Drop the person's job events beyond the newest `keep`."""
    mine = job_calls.c.owner_id == owner_id
    with engine.begin() as conn:
        oldest_kept = conn.execute(
            select(job_calls.c.id).where(mine).order_by(job_calls.c.id.desc()).offset(keep - 1).limit(1)
        ).scalar()
        if oldest_kept is not None:
            conn.execute(delete(job_calls).where(mine, job_calls.c.id < oldest_kept))
