"""What background jobs said, and the job engine's rows read back (PostgreSQL deployments).

The job engine (procrastinate, core/jobs/engine.py) keeps its jobs in `procrastinate_jobs` (created on
PostgreSQL by migration v0014; never on SQLite). It has no place for what a job tells a person, so each job's
Japanese result or failure message, with when it started and ended, is a row of `job_messages`, keyed by the
engine's job id. Every replica reads both, so each shows the same 「記憶を整理しています…」 and the same
再試行.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Column, Engine, Float, String, Table, Text, text
from sqlalchemy.dialects import postgresql, sqlite

from core.store.db import metadata

job_messages = Table(
    "job_messages",
    metadata,
    Column("job_id", String(64), primary_key=True),
    Column("job_key", String(255), nullable=False, index=True),
    Column("task", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # running | done | failed
    Column("message", Text, nullable=False, default=""),
    Column("started_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
)

# procrastinate's statuses as the pages name them
STATUS = {
    "todo": "queued",
    "doing": "running",
    "succeeded": "done",
    "failed": "failed",
    "cancelled": "failed",
    "aborting": "running",
    "aborted": "failed",
}
UNFINISHED = ("todo", "doing", "aborting")


def record_job(engine: Engine, job_id: str, key: str, task: str, status: str, message: str = "") -> None:
    """Upsert what the job `job_id` did (its Japanese message) or, with status running, that it started."""
    now = time.time()
    values: dict[str, Any] = {"job_id": job_id, "job_key": key, "task": task, "status": status}
    values["message"] = message
    if status == "running":
        values["started_at"] = now
    else:
        values["finished_at"] = now
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(job_messages).values(**values)
    update = {k: v for k, v in values.items() if k not in ("job_id", "job_key", "task")}
    with engine.begin() as conn:
        conn.execute(statement.on_conflict_do_update(index_elements=["job_id"], set_=update))


_JOBS_OF_KEY = text(
    """
    SELECT j.id, j.task_name, j.status, j.attempts, m.message, m.finished_at,
           (SELECT EXTRACT(EPOCH FROM MIN(e.at)) FROM procrastinate_events e
             WHERE e.job_id = j.id AND e.type = 'deferred') AS submitted_at,
           (SELECT EXTRACT(EPOCH FROM MAX(e.at)) FROM procrastinate_events e
             WHERE e.job_id = j.id AND e.type = 'started') AS started_at
      FROM procrastinate_jobs j
      LEFT JOIN job_messages m ON m.job_id = CAST(j.id AS TEXT)
     WHERE j.lock = :key
     ORDER BY j.id DESC
     LIMIT :limit
    """
)


def jobs_of_key(engine: Engine, key: str, limit: int = 20) -> list[dict[str, Any]]:
    """The newest jobs under one key (the engine's lock), oldest first, as the in-process worker lists them:
    id, task, status (queued / running / done / failed), message, submitted / started / finished times."""
    with engine.connect() as conn:
        rows = conn.execute(_JOBS_OF_KEY, {"key": key, "limit": limit}).all()
    return [
        {
            "id": str(r.id),
            "task": r.task_name,
            "status": STATUS.get(r.status, r.status),
            "message": r.message or "",
            "attempts": int(r.attempts),
            "submitted_at": float(r.submitted_at) if r.submitted_at is not None else None,
            "started_at": float(r.started_at) if r.started_at is not None else None,
            "finished_at": r.finished_at,
        }
        for r in reversed(rows)
    ]


def waiting_job(engine: Engine, queueing_lock: str) -> int | None:
    """The id of the job waiting (todo) under `queueing_lock`, if any (at most one: the engine's rule)."""
    with engine.connect() as conn:
        return conn.execute(
            text("SELECT id FROM procrastinate_jobs WHERE queueing_lock = :q AND status = 'todo'"),
            {"q": queueing_lock},
        ).scalar()


def unfinished_count(engine: Engine, key: str, tasks: tuple[str, ...] | None = None) -> int:
    """Jobs under `key` (of `tasks`, when given) still waiting or running, on any replica."""
    query = (
        "SELECT COUNT(*) FROM procrastinate_jobs WHERE lock = :key AND status IN ('todo','doing','aborting')"
    )
    params: dict[str, Any] = {"key": key}
    if tasks is not None:
        query += " AND task_name = ANY(:tasks)"
        params["tasks"] = list(tasks)
    with engine.connect() as conn:
        return int(conn.execute(text(query), params).scalar_one())


def queue_rows(engine: Engine) -> dict[str, Any]:
    """For an admin: jobs per status, the oldest waiting job's age (seconds), the ten newest failures."""
    with engine.connect() as conn:
        counts: dict[str, int] = {
            str(status): int(n)
            for status, n in conn.execute(
                text("SELECT status, COUNT(*) FROM procrastinate_jobs GROUP BY status")
            )
        }
        oldest = conn.execute(
            text(
                "SELECT EXTRACT(EPOCH FROM NOW() - MIN(scheduled_at_or_now)) FROM ("
                " SELECT COALESCE(j.scheduled_at, (SELECT MIN(e.at) FROM procrastinate_events e"
                "  WHERE e.job_id = j.id)) AS scheduled_at_or_now"
                " FROM procrastinate_jobs j WHERE j.status = 'todo') w"
            )
        ).scalar()
        failures = conn.execute(
            text(
                "SELECT j.id, j.task_name, m.message, m.finished_at FROM procrastinate_jobs j"
                " LEFT JOIN job_messages m ON m.job_id = CAST(j.id AS TEXT)"
                " WHERE j.status = 'failed' ORDER BY j.id DESC LIMIT 10"
            )
        ).all()
    return {
        "counts": {
            "queued": counts.get("todo", 0),
            "running": counts.get("doing", 0) + counts.get("aborting", 0),
            "done": counts.get("succeeded", 0),
            "failed": sum(counts.get(k, 0) for k in ("failed", "cancelled", "aborted")),
        },
        "oldest_waiting_s": round(float(oldest), 1) if oldest is not None else None,
        "failures": [
            {"id": str(r.id), "label": r.task_name, "message": r.message or "", "finished_at": r.finished_at}
            for r in failures
        ],
    }
