"""Nothing owed is forgotten: work the database says is owed is queued again, on start and periodically.

Each flow registers finders (core.jobs.tasks.TaskRegistry.owe) that read its tables: episodes whose
extraction is pending (or was claimed by a job that died), review threads missing a due summary. Queueing
them again is safe because every job claims its work atomically and writes with ON CONFLICT: a duplicate
finds nothing to do. Each owed job carries a queueing lock, so the same work never waits twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.jobs.tasks import OwedJob, TaskRegistry

if TYPE_CHECKING:  # SQLAlchemy is imported by the store when an engine opens
    from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 60.0  # Ours: how often a worker looks for owed work (KATACHI_JOB_SWEEP_S)


def owed_jobs(engine: Engine, registry: TaskRegistry) -> list[OwedJob]:
    """Everything the registered finders say is owed, in their order."""
    return [owed for finder in registry.finders for owed in finder(engine)]


def last_failed(jobs: Callable[[Any], list[dict[str, Any]]], owed: OwedJob) -> bool:
    """Whether the newest job of the owed task's kind under its key failed (read through `jobs(key)`)."""
    mine = [j for j in jobs(owed.key) if j.get("kind") == owed.task.kind]
    return bool(mine) and mine[-1]["status"] == "failed"


def unfinished(jobs: Callable[[Any], list[dict[str, Any]]], owed: OwedJob) -> bool:
    """Whether a job of the owed task's kind is still waiting or running under its key."""
    return any(
        j.get("kind") == owed.task.kind and j["status"] in ("queued", "running") for j in jobs(owed.key)
    )


def requeue_owed(
    engine: Engine,
    registry: TaskRegistry,
    defer: Callable[[OwedJob], Any],
    jobs: Callable[[Any], list[dict[str, Any]]] | None = None,
) -> int:
    """Queue every owed job with `defer`; the number handed over (some may have been waiting already).
    Read through `jobs(key)`, a one-per-key task (a queueing lock: the thread's summary) is not queued while
    one runs, nor after its last job failed when it says so (the page's 再試行 decides then)."""

    def wanted(owed: OwedJob) -> bool:
        if jobs is None:
            return True
        if owed.task.queueing_lock and unfinished(jobs, owed):
            return False
        return owed.task.requeue_after_failure or not last_failed(jobs, owed)

    found = [owed for owed in owed_jobs(engine, registry) if wanted(owed)]
    for owed in found:
        defer(owed)
    if found:
        log.info("queued %d owed jobs again", len(found))
    return len(found)
