"""Background work that follows a reply (memory extraction, summaries): a small worker owned by core.

One `BackgroundWorker` per process (the shell keeps it in `st.cache_resource`; flows receive it as an
argument). Jobs are keyed by person and conversation: jobs of one key run in the order they were
submitted, one at a time; different keys run in parallel on `threads` threads. The queue is bounded:
a full queue refuses a job (`submit` returns None) and the caller keeps the work for later, so a burst
never grows memory without limit. Jobs write their own results to the store; the worker keeps a short
status list per key (queued / running / done / failed, with a Japanese label and message) for pages
to show, and never touches Streamlit.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.jobs.sweep import SWEEP_EVERY_S, requeue_owed
from core.jobs.tasks import JobContext, JobFailed, OwedJob, Task, TaskRegistry, json_args

if TYPE_CHECKING:  # SQLAlchemy is imported by the store when an engine opens
    from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

JobStatus = Literal["queued", "running", "done", "failed"]
MAX_QUEUED = 256  # jobs waiting in the whole process
KEEP_FINISHED = 20  # finished jobs remembered per key (for the page's status line)


__all__ = ["BackgroundWorker", "Job", "JobFailed", "JobStatus"]


@dataclass
class Job:
    """One piece of background work. `run` returns a short Japanese summary (or "")."""

    key: Hashable
    kind: str
    label: str
    run: Callable[[], str | None]
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    queueing_lock: str = ""
    status: JobStatus = "queued"
    message: str = ""
    submitted_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    # the submitter's context (core.debuglog.trace: a summary logs under the reply that caused it)
    context: contextvars.Context = field(default_factory=contextvars.copy_context)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    def view(self) -> dict[str, Any]:
        """A plain dict for pages (no callables)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "status": self.status,
            "message": self.message,
            "submitted_at": self.submitted_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


@dataclass(frozen=True)
class _Sweep:
    thread: threading.Thread
    stop: threading.Event


class BackgroundWorker:
    """A bounded, per-key ordered job runner on a few daemon threads."""

    def __init__(
        self,
        threads: int = 2,
        max_queued: int = MAX_QUEUED,
        name: str = "katachi-worker",
        *,
        context: Callable[[], JobContext] | None = None,
    ):
        self.max_queued = max_queued
        self._context = context
        self._sweepers: dict[str, _Sweep] = {}
        self._cond = threading.Condition()
        self._queues: dict[Hashable, deque[Job]] = {}
        self._ready: deque[Hashable] = deque()  # keys with queued jobs and nothing running
        self._running: set[Hashable] = set()
        self._history: dict[Hashable, deque[Job]] = {}
        self._queued = 0
        self._closed = False
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True) for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    # -- submitting and reading ---------------------------------------------------------------
    def submit(
        self, key: Hashable, kind: str, label: str, run: Callable[[], str | None], *, job_id: str = ""
    ) -> Job | None:
        """Queue `run` under `key`; None when the queue is full or the worker is closed (keep it for later).

        The job runs in a copy of the caller's context (contextvars), so the trace bound around the
        submission (core.debuglog.trace) is the one its model calls are logged under.
        """
        with self._cond:
            if self._closed or self._queued >= self.max_queued:
                return None
            job = Job(key, kind, label, run)
            if job_id:
                job.id = job_id
            self._queues.setdefault(key, deque()).append(job)
            self._remember(job)
            self._queued += 1
            if key not in self._running and key not in self._ready:
                self._ready.append(key)
            self._cond.notify()
            return job

    def defer(
        self,
        task: Task,
        key: Hashable,
        args: dict[str, Any],
        context: JobContext | None = None,
        *,
        dedupe: str | None = None,
    ) -> Job | None:
        """Queue the named task with JSON `args` (the call the database-backed engine takes too); it runs here
        with `context` (the caller's live objects; else the worker's context factory). A job with the same
        queueing lock (`dedupe`, by default the task's name when it has one) already waiting under `key` is
        not queued twice: the waiting job is returned."""
        lock = (task.name if task.queueing_lock else "") if dedupe is None else dedupe
        return self._defer(OwedJob(task, key, args, lock), context)

    def defer_owed(self, owed: OwedJob, context: JobContext | None = None) -> Job | None:
        """Queue work the database says is owed (core.jobs.sweep) with `context`, else the worker's factory."""
        return self._defer(owed, context)

    def _defer(self, owed: OwedJob, context: JobContext | None) -> Job | None:
        if context is None:
            if self._context is None:
                raise ValueError("the in-process worker was given no job context")
            context = self._context()
        args = json_args(owed.args)
        with self._cond:
            if owed.dedupe:
                for waiting in self._queues.get(owed.key, ()):
                    if waiting.queueing_lock == owed.dedupe:
                        return waiting
        from core.jobs.job_log import for_person  # noqa: PLC0415 - SQLAlchemy's store: not at the shell's start

        job_id = uuid.uuid4().hex[:12]
        ctx, task = for_person(context.with_job(job_id), args), owed.task
        job = self.submit(owed.key, task.kind, task.label, lambda: task.run(ctx, args), job_id=job_id)
        if job is not None:
            job.queueing_lock = owed.dedupe
        return job

    def start_sweep(
        self,
        engine: Engine,
        registry: TaskRegistry,
        context: Callable[[], JobContext],
        every: float = SWEEP_EVERY_S,
    ) -> None:
        """Queue owed work found in `engine`'s database now and every `every` seconds, each job with a context
        from `context` (a daemon thread; once per database)."""
        name = engine.url.render_as_string(hide_password=True)
        with self._cond:
            if name in self._sweepers:
                return
            stop = threading.Event()

            def stopped() -> bool:
                return self._closed or stop.is_set()

            def loop() -> None:
                while not stopped():
                    try:
                        requeue_owed(engine, registry, lambda owed: self._defer(owed, context()), self.jobs)
                    except Exception:  # the sweep outlives a locked database; it runs again next round
                        log.exception("job sweep failed")
                    with self._cond:
                        self._cond.wait_for(stopped, timeout=every)

            thread = threading.Thread(target=loop, name="katachi-sweep", daemon=True)
            self._sweepers[name] = _Sweep(thread, stop)
            thread.start()

    def stop_sweeps(self, timeout: float = 5.0) -> int:
        """Stop every owed-work sweep this worker runs (the worker itself keeps running); the number stopped.
        A database that is no longer served (a test's data dir, a deployment switched to another store) is
        then no longer read, and its owed work no longer shares this worker's threads."""
        with self._cond:
            sweeps, self._sweepers = list(self._sweepers.values()), {}
            for sweep in sweeps:
                sweep.stop.set()
            self._cond.notify_all()
        for sweep in sweeps:
            sweep.thread.join(timeout)
        return len(sweeps)

    def jobs(self, key: Hashable) -> list[dict[str, Any]]:
        """Recent jobs of `key`, oldest first (queued and running ones included)."""
        with self._cond:
            return [job.view() for job in self._history.get(key, ())]

    def busy(self, key: Hashable, kind: str | None = None) -> bool:
        """Whether `key` has unfinished jobs (of `kind`, when given)."""
        with self._cond:
            return any(
                not j.finished and (kind is None or j.kind == kind) for j in self._history.get(key, ())
            )

    def wait(self, key: Hashable, kind: str | None = None, timeout: float = 30.0) -> bool:
        """Block until `key` has no unfinished jobs (of `kind`); False on timeout."""
        return self._wait_until(lambda: not self.busy(key, kind), timeout)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no key has unfinished jobs; False on timeout."""
        return self._wait_until(lambda: not any(self.busy(key) for key in list(self._history)), timeout)

    def _wait_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Block until `done()` (read under the worker's lock, after every finished job); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def summary(self) -> dict[str, Any]:
        """What the queue holds, for an admin: counts per status, the oldest waiting job, recent failures."""
        with self._cond:
            every = [job for history in self._history.values() for job in history]
        return queue_summary([job.view() for job in every], engine="in-process")

    def close(self, timeout: float = 5.0) -> None:
        """Refuse new jobs, let queued ones finish, stop the threads."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    # -- internals -----------------------------------------------------------------------------
    def _remember(self, job: Job) -> None:
        history = self._history.setdefault(job.key, deque())
        history.append(job)
        while len(history) > KEEP_FINISHED and history[0].finished:
            history.popleft()

    def _next(self) -> Job | None:
        with self._cond:
            while not self._ready:
                if self._closed:
                    return None
                self._cond.wait()
            key = self._ready.popleft()
            job = self._queues[key].popleft()
            self._queued -= 1
            self._running.add(key)
            job.status, job.started_at = "running", time.time()
            return job

    def _finish(self, job: Job) -> None:
        with self._cond:
            self._running.discard(job.key)
            if self._queues.get(job.key):
                self._ready.append(job.key)
            else:
                self._queues.pop(job.key, None)
            self._cond.notify_all()

    def _loop(self) -> None:
        while (job := self._next()) is not None:
            try:
                summary = job.context.run(job.run)
                job.status, job.message = "done", summary or ""
            except JobFailed as exc:
                job.status, job.message = "failed", exc.message
            except Exception as exc:  # a job's failure is recorded for the page, never raised into the app
                log.exception("background job %s (%s) failed", job.kind, job.id)
                job.status, job.message = (
                    "failed",
                    f"予期しないエラーで失敗しました（{type(exc).__name__}）。",
                )
            job.finished_at = time.time()
            self._finish(job)


def queue_summary(views: list[dict[str, Any]], engine: str) -> dict[str, Any]:
    """Counts per status, the oldest waiting job's age in seconds, the last failures (newest first)."""
    counts = {status: 0 for status in ("queued", "running", "done", "failed")}
    for view in views:
        counts[view["status"]] = counts.get(view["status"], 0) + 1
    waiting = [v["submitted_at"] for v in views if v["status"] == "queued" and v.get("submitted_at")]
    failures = sorted(
        (v for v in views if v["status"] == "failed"), key=lambda v: v.get("finished_at") or 0, reverse=True
    )
    return {
        "engine": engine,
        "counts": counts,
        "oldest_waiting_s": round(time.time() - min(waiting), 1) if waiting else None,
        "failures": [
            {"id": v["id"], "label": v["label"], "message": v["message"], "finished_at": v.get("finished_at")}
            for v in failures[:10]
        ],
    }
