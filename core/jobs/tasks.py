"""Named tasks, the registry the flows fill, and the context a task runs in.

A job is a task name, a key and JSON arguments (ids, never objects), so it can wait in a database row and run
in another process. Each flow declares its `Task`s next to the work they do and hands them (and the finders of
the work it owes) to a `TaskRegistry`; the composition root (core.services) builds the registry once. A task
function receives a `JobContext` — the engine, the model client, the vector store and the debug sink, rebuilt
from settings in a worker process or handed over live by the in-process worker — and the arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.debuglog.events import DebugSink
from core.llm.base import LLMClient

if TYPE_CHECKING:  # SQLAlchemy is imported by the store when an engine opens
    from sqlalchemy.engine import Engine


class JobFailed(Exception):
    """Raised by a job to report a failure a person should see (`message` is Japanese). Not retried by the
    engine: what failed is kept in the store and the page offers 再試行."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class JobContext:
    """What a task needs besides its arguments. `live` holds objects only the in-process worker can hand
    over (the page's repository with its clock, a person's open collection); a task falls back to building
    them from `engine` / `chroma` / `embedder` when they are absent (a worker process)."""

    engine: Engine
    client: LLMClient
    sink: DebugSink | None = None
    chroma: Callable[[], Any] | None = None  # opens the Chroma client (None: no vector store)
    embedder: Any = None
    job_id: str = ""  # the claim token: the same across retries of one job
    live: Mapping[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # values masked in the debug events a job keeps (core.jobs.job_log)

    def with_job(self, job_id: str) -> JobContext:
        return replace(self, job_id=job_id)


TaskFunction = Callable[[JobContext, dict[str, Any]], str | None]


@dataclass(frozen=True)
class Task:
    """One kind of background work. `kind` is what pages ask about (memory, memory_retry, summary);
    `queueing_lock` makes a second defer while one is still waiting a no-op (one pending summary per thread)."""

    name: str
    kind: str
    label: str
    run: TaskFunction
    queueing_lock: bool = False
    # whether the sweep queues owed work again after this task's last job under the key failed (False when
    # nothing else bounds the attempts: the page's 再試行 decides)
    requeue_after_failure: bool = True


@dataclass(frozen=True)
class OwedJob:
    """Work the database says is owed (found by a flow's finder), to be queued again."""

    task: Task
    key: Hashable
    args: dict[str, Any]
    dedupe: str = ""  # a queueing lock, so the same owed work is never waiting twice


OwedFinder = Callable[["Engine"], Iterable[OwedJob]]


@dataclass
class TaskRegistry:
    """Every task by name, and every finder of owed work; filled by each flow's `register_tasks`."""

    tasks: dict[str, Task] = field(default_factory=dict)
    finders: list[OwedFinder] = field(default_factory=list)

    def add(self, *tasks: Task) -> None:
        for task in tasks:
            if task.name in self.tasks and self.tasks[task.name] is not task:
                raise ValueError(f"two tasks named {task.name!r}")
            self.tasks[task.name] = task

    def owe(self, finder: OwedFinder) -> None:
        self.finders.append(finder)

    def get(self, name: str) -> Task:
        return self.tasks[name]


def key_text(key: Hashable) -> str:
    """A job key as one string (the engine's lock): ("alice", "memory") -> "alice|memory"."""
    return "|".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


def json_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as they come back from a database row (raises on anything not JSON)."""
    return dict(json.loads(json.dumps(dict(args), ensure_ascii=False)))
