"""Memory's background work as named tasks (core.jobs): the job after a turn, the page's 再試行, and the
finder of owed extractions that queues them again after a crash (and, from core.flows.memory.index_job, the
re-indexing of units whose vectors were never written).

Arguments are ids only (owner, episode id, the turn's time, the extraction mode). A task rebuilds the
person's repository and collection from the job context, or takes the live ones the in-process worker hands
over. One person's jobs share the key `memory_job_key(owner)`: the engine runs them one at a time, in order,
on any replica.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from core.clock import utc_now
from core.debuglog.events import DebugSink
from core.flows.memory.background import (
    MEMORY_JOB_KIND,
    MEMORY_JOB_LABEL,
    RETRY_JOB_KIND,
    RETRY_JOB_LABEL,
    RETRY_LIMIT,
    extraction_failure,
    memory_job_key,
    run_memory_job,
)
from core.flows.memory.constants import DEFAULT_EXTRACTION, EXTRACT_MAX_ATTEMPTS
from core.flows.memory.extraction import retry_pending_extractions
from core.flows.memory.extraction_store import CLAIM_STALE_S
from core.flows.memory.index_job import MEMORY_INDEX_TASK, owed_memory_indexes
from core.flows.memory.stores import job_collection, job_repository
from core.jobs.queue import JobQueue, JobRef
from core.jobs.tasks import JobContext, JobFailed, OwedJob, Task, TaskRegistry
from core.llm.base import LLMClient
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_EPISODE, units

OWED_LIMIT = 1000  # episodes one sweep queues again (the rest next round)


def run_turn_task(ctx: JobContext, args: dict[str, Any]) -> str:
    """The job after one saved episode (background.run_memory_job); JobFailed when its extraction failed."""
    owner = str(args["owner"])
    result = run_memory_job(
        job_repository(ctx, owner),
        job_collection(ctx, owner),
        ctx.client,
        int(args["episode_id"]),
        args.get("now"),
        ctx.sink,
        str(args.get("mode") or DEFAULT_EXTRACTION),
        claim=ctx.job_id,
    )
    if result.failure:
        raise JobFailed(result.failure)
    return result.message()


def run_retry_task(ctx: JobContext, args: dict[str, Any]) -> str:
    """The page's 再試行: catch up on failed or unprocessed episodes of the person."""
    owner = str(args["owner"])
    mode = str(args.get("mode") or DEFAULT_EXTRACTION)
    results = retry_pending_extractions(
        job_repository(ctx, owner),
        job_collection(ctx, owner),
        ctx.client,
        sink=ctx.sink,
        limit=RETRY_LIMIT,
        mode=mode,
        claim=ctx.job_id,
    )
    failed = [r for r in results if not r.ok]
    if failed:
        raise JobFailed(
            extraction_failure(failed[0]) + f"（再試行 {len(results)} 件中 {len(failed)} 件が失敗）"
        )
    return (
        f"{len(results)} 件の抽出をやり直しました。" if results else "再試行が必要なエピソードはありません。"
    )


MEMORY_TURN_TASK = Task("memory.turn", MEMORY_JOB_KIND, MEMORY_JOB_LABEL, run_turn_task)
MEMORY_RETRY_TASK = Task("memory.retry", RETRY_JOB_KIND, RETRY_JOB_LABEL, run_retry_task, queueing_lock=True)


def episode_dedupe(episode_id: int) -> str:
    """The queueing lock of an episode's job: the turn's job and the sweep's never wait side by side."""
    return f"episode:{episode_id}"


def owed_extractions(engine: Engine, now: int | None = None) -> list[OwedJob]:
    """Episodes of every person whose extraction is owed: pending (its job was lost or never queued), or
    running under a claim older than CLAIM_STALE_S (its worker died), oldest first."""
    now = utc_now() if now is None else now
    stale = (units.c.extract_state == "running") & (units.c.extract_claimed_at < now - CLAIM_STALE_S)
    query = (
        select(units.c.id, units.c.owner_id)
        .where(units.c.kind == KIND_EPISODE, units.c.extract_attempts < EXTRACT_MAX_ATTEMPTS)
        .where((units.c.extract_state == "pending") | stale)
        .order_by(units.c.id)
        .limit(OWED_LIMIT)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        OwedJob(
            MEMORY_TURN_TASK,
            memory_job_key(str(owner)),
            {"owner": str(owner), "episode_id": int(unit_id), "mode": DEFAULT_EXTRACTION},
            episode_dedupe(int(unit_id)),
        )
        for unit_id, owner in rows
    ]


def defer_memory_retry(
    queue: JobQueue,
    repo: MemoryRepository,
    collection: Any,
    client: LLMClient,
    sink: DebugSink | None = None,
    mode: str = DEFAULT_EXTRACTION,
) -> JobRef | None:
    """Queue the page's 再試行 for the repository's person (one waiting at a time); None when the queue is
    full."""
    context = JobContext(repo.engine, client, sink, live={"repo": repo, "collection": collection})
    args = {"owner": repo.owner_id, "mode": mode}
    return queue.defer(MEMORY_RETRY_TASK, memory_job_key(repo.owner_id), args, context)


def register_memory_tasks(registry: TaskRegistry) -> None:
    """Memory's tasks and its finder of owed work, for the composition root."""
    registry.add(MEMORY_TURN_TASK, MEMORY_RETRY_TASK, MEMORY_INDEX_TASK)
    registry.owe(owed_extractions)
    registry.owe(owed_memory_indexes)
