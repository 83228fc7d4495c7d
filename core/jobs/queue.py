"""The one job interface: the in-process worker (embedded default) and the database-backed engine (a team's
PostgreSQL) both take `defer(task, key, args)` and answer `jobs`, `busy`, `wait` and `summary`."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol

from core.jobs.tasks import JobContext, Task


class JobRef(Protocol):
    """A queued job, as far as its caller cares: its id (a string on both paths)."""

    @property
    def id(self) -> str: ...


class JobQueue(Protocol):
    """Where flows queue background work and pages read its status (core/jobs/worker.py, engine.py)."""

    def defer(
        self,
        task: Task,
        key: Hashable,
        args: dict[str, Any],
        context: JobContext | None = None,
        *,
        dedupe: str | None = None,
    ) -> JobRef | None: ...

    def submit(
        self, key: Hashable, kind: str, label: str, run: Callable[[], str | None], *, job_id: str = ""
    ) -> JobRef | None: ...

    def jobs(self, key: Hashable) -> list[dict[str, Any]]: ...

    def busy(self, key: Hashable, kind: str | None = None) -> bool: ...

    def wait(self, key: Hashable, kind: str | None = None, timeout: float = 30.0) -> bool: ...

    def summary(self) -> dict[str, Any]: ...
