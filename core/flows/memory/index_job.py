"""Re-indexing as a job: units whose vectors were never written are found in the database and indexed by any
worker, without anyone opening the memory page.

A unit's `indexed_at` is cleared when it is (re)indexed and set once its vector is written after the commit
(core.flows.memory.indexing); a unit still cleared after the reconcile grace period lost its vector write (a
process killed between the commit and the write, a vector store that was down) or was stored before the
column existed (migration v0017). `owed_memory_indexes` (the sweep's finder; database only) names the people
with such units; `reindex_memory` (the job, one per person at a time) reads their vectors back: a vector
written after the unit's last change is current and the unit is only marked, any other unit is indexed again.

The page's first visit still reconciles the whole index (orphan vectors too, and a collection of a new
embedder); this job is what keeps a team deployment's index whole without it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from core.clock import utc_now
from core.flows.memory.indexing import index_units, mark_indexed
from core.flows.memory.stores import job_collection, job_repository
from core.jobs.tasks import JobContext, OwedJob, Task
from core.search.vector_age import INDEXED_AT, RECONCILE_GRACE_SECONDS
from core.store.memory.tables import mine, units

INDEX_JOB_KIND = "memory_index"
INDEX_JOB_LABEL = "記憶の索引の補完"
INDEX_BATCH = 500  # units one job reads back and indexes per transaction
INDEX_LIMIT = 5_000  # units one job handles (the sweep queues the person again for the rest)
OWED_PEOPLE_LIMIT = 1_000  # people one sweep queues (the rest next round)


def memory_index_key(owner: str) -> tuple[str, str]:
    """The job key of a person's re-indexing (apart from their turn jobs: it makes no model call and may run
    beside them; vector writes are upserts)."""
    return (owner, "memory-index")


def unindexed_units(engine: Engine, owner: str, now: int, limit: int = INDEX_LIMIT) -> dict[int, int]:
    """The person's units without a written vector that are older than the grace period at `now`: id ->
    updated_at, oldest first."""
    query = (
        select(units.c.id, units.c.updated_at)
        .where(mine(owner), units.c.indexed_at.is_(None), units.c.updated_at < now - RECONCILE_GRACE_SECONDS)
        .order_by(units.c.id)
        .limit(limit)
    )
    with engine.connect() as conn:
        return {int(i): int(t) for i, t in conn.execute(query)}


def owed_memory_indexes(engine: Engine, now: int | None = None) -> list[OwedJob]:
    """People whose units lack a written vector past the grace period: one re-indexing job each."""
    now = utc_now() if now is None else now
    query = (
        select(units.c.owner_id, func.min(units.c.id))
        .where(units.c.indexed_at.is_(None), units.c.updated_at < now - RECONCILE_GRACE_SECONDS)
        .group_by(units.c.owner_id)
        .order_by(func.min(units.c.id))
        .limit(OWED_PEOPLE_LIMIT)
    )
    with engine.connect() as conn:
        owners = [str(owner) for owner, _ in conn.execute(query)]
    return [OwedJob(MEMORY_INDEX_TASK, memory_index_key(o), {"owner": o}, "index") for o in owners]


def _current(stored: dict[str, Any], changed_at: dict[int, int]) -> set[int]:
    """The units whose stored vector was written at or after their last change (or before vectors carried
    their time: written by the same path, so taken as current)."""
    current = set()
    for vector_id, meta in zip(
        stored["ids"], stored["metadatas"] or [None] * len(stored["ids"]), strict=True
    ):
        written = (meta or {}).get(INDEXED_AT)
        unit_id = int(vector_id)
        if not isinstance(written, int | float) or written >= changed_at[unit_id]:
            current.add(unit_id)
    return current


def reindex_memory(ctx: JobContext, args: dict[str, Any]) -> str:
    """The job: index the person's units whose vectors were not written (see the module docstring)."""
    owner = str(args["owner"])
    repo, collection = job_repository(ctx, owner), job_collection(ctx, owner)
    owed = unindexed_units(ctx.engine, owner, utc_now())
    ids = sorted(owed)
    indexed = 0
    for start in range(0, len(ids), INDEX_BATCH):
        part = {i: owed[i] for i in ids[start : start + INDEX_BATCH]}
        current: set[int] = set()
        if collection is not None:
            current = _current(collection.get(ids=[str(i) for i in part], include=["metadatas"]), part)
        stale = sorted(set(part) - current)
        with repo.begin() as conn:
            if stale:
                index_units(conn, collection, stale)  # marked once its vectors are written, after the commit
            # units whose vector is current; without a vector store there is nothing more to write
            marks = part if collection is None else {i: part[i] for i in current}
            mark_indexed(conn, marks)
        indexed += len(stale)
    if collection is None:
        return f"ベクトルストアがないため、記憶 {len(ids):,} 件はキーワード索引だけを更新しました。"
    if not ids:
        return "索引の足りない記憶はありません。"
    return f"索引のなかった記憶 {indexed:,} 件を登録しました（確認 {len(ids):,} 件）。"


MEMORY_INDEX_TASK = Task("memory.index", INDEX_JOB_KIND, INDEX_JOB_LABEL, reindex_memory, queueing_lock=True)
