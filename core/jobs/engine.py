"""The team deployment's job engine: procrastinate on the app's PostgreSQL (DATABASE_URL).

Why procrastinate: jobs are rows in the database the team already runs and backs up (no broker to add),
deferring is one INSERT, workers take jobs with `FOR UPDATE SKIP LOCKED` and wake on LISTEN/NOTIFY, and it
has what this work needs built in: `lock` (jobs sharing a lock run one at a time in the order they were
deferred, on any number of workers: one person's memory jobs stay in order across replicas),
`queueing_lock` (at most one waiting job per lock: one pending summary per thread), retry strategies, and
worker heartbeats from which stalled jobs are found (a worker killed mid-job).

`EngineQueue` has the in-process worker's interface (`defer`, `jobs`, `busy`, `wait`, `summary`), reading
status from the database so every replica sees the same. Closures that must run beside the caller (the
diagnosis summary, whose result the same turn awaits) still go to an in-process worker via `submit`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from procrastinate import App, PsycopgConnector, SyncPsycopgConnector
from procrastinate import JobContext as EngineJobContext
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.retry import BaseRetryStrategy, RetryDecision
from sqlalchemy.engine import Engine

from core.debuglog import trace
from core.jobs.job_log import DEBUG_ARG, for_person, records_calls
from core.jobs.sweep import requeue_owed
from core.jobs.tasks import JobContext, JobFailed, OwedJob, Task, TaskRegistry, json_args, key_text
from core.jobs.worker import BackgroundWorker, Job
from core.store.jobs import jobs_of_key, queue_rows, record_job, unfinished_count, waiting_job

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # an unexpected error (database blip, a bug) is tried three times; JobFailed never again
UNEXPECTED = "予期しないエラーで失敗しました（{name}）。"
REPLACED = "停止したワーカーの同じ処理を再開したため、この待機分は取り消しました。"
# the job argument carrying the submitter's trace context (core.debuglog.trace), so the calls of a job another
# process runs hang where the page's would (the in-process worker keeps the context itself)
TRACE_ARG = "_trace"
WORKER_THREAD = "katachi-jobs"  # the in-process worker's thread (the test suite's pool guard looks for it)


class EngineRetry(BaseRetryStrategy):
    """Retry unexpected errors with a short backoff; a JobFailed (a failure a person sees) is final."""

    def get_retry_decision(self, *, exception: BaseException, job: Any) -> RetryDecision | None:
        if isinstance(exception, JobFailed) or job.attempts + 1 >= MAX_ATTEMPTS:
            return None
        return RetryDecision(retry_in={"seconds": 2 ** (job.attempts + 1)})


def conninfo(engine: Engine) -> str:
    """The libpq connection string of a SQLAlchemy PostgreSQL engine (psycopg's URL without the driver)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


class EngineJob:
    """What `defer` returns: the engine's job id (as a string, like the in-process worker's ids)."""

    def __init__(self, job_id: str):
        self.id = job_id


class EngineQueue:
    """Jobs on procrastinate; a worker loop (thread) in this process unless `start_worker` is never called."""

    def __init__(
        self,
        engine: Engine,
        registry: TaskRegistry,
        context: Callable[[], JobContext],
        *,
        local: BackgroundWorker | None = None,
        concurrency: int = 2,
        sweep_every: float = 60.0,
        stalled_after: float = 30.0,
        heartbeat: float = 5.0,
        poll: float = 5.0,
    ):
        self.engine, self.registry, self.context = engine, registry, context
        self.local = local or BackgroundWorker(threads=2)
        self.concurrency, self.sweep_every = concurrency, sweep_every
        self.stalled_after, self.heartbeat, self.poll = stalled_after, heartbeat, poll
        self._defer_app = App(
            connector=SyncPsycopgConnector(conninfo=conninfo(engine), min_size=1, max_size=2)
        )
        self._defer_lock = threading.Lock()
        self._defer_open = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[None] | None = None
        # stop_worker may come before the worker's thread has made its loop: the flag tells it not to start
        self._stop_lock = threading.Lock()
        self._stopping = False
        self.started = threading.Event()

    # -- the job interface (the same as BackgroundWorker's) -------------------------------------------
    def defer(
        self,
        task: Task,
        key: Hashable,
        args: dict[str, Any],
        context: JobContext | None = None,
        *,
        dedupe: str | None = None,
    ) -> EngineJob | None:
        """Insert a job row: `task` by name, `key` as its lock (one at a time, in order, per key), JSON
        `args`. A job with the same queueing lock (`dedupe`, by default the task's name when it has one)
        already waiting under `key` is not queued twice (that job is returned). `context` is the caller's
        live objects, unused here: the worker rebuilds them from settings (only whether its sink records calls
        travels with the job, core.jobs.job_log.DEBUG_ARG)."""
        lock = (task.name if task.queueing_lock else "") if dedupe is None else dedupe
        where = {k: v for k, v in trace.current().fields().items() if v not in ("", 0, None)}
        args = {**args, TRACE_ARG: where} if where else dict(args)
        if context is not None and records_calls(context.sink):
            args[DEBUG_ARG] = True
        return self.defer_owed(OwedJob(task, key, args, lock))

    def defer_owed(self, owed: OwedJob) -> EngineJob | None:
        lock = key_text(owed.key)
        queueing_lock = f"{lock}|{owed.dedupe}" if owed.dedupe else None
        deferrer = self._app().configure_task(owed.task.name, lock=lock, queueing_lock=queueing_lock)
        try:
            return EngineJob(str(deferrer.defer(**json_args(owed.args))))
        except AlreadyEnqueued:
            waiting = waiting_job(self.engine, queueing_lock or "")
            return EngineJob(str(waiting)) if waiting is not None else None

    def submit(
        self, key: Hashable, kind: str, label: str, run: Callable[[], str | None], *, job_id: str = ""
    ) -> Job | None:
        """A closure beside the caller (its result is awaited in this process): the in-process worker."""
        return self.local.submit(key, kind, label, run, job_id=job_id)

    def jobs(self, key: Hashable) -> list[dict[str, Any]]:
        """Recent jobs of `key` on every replica, oldest first (plus this process's in-process ones)."""
        views = []
        for row in jobs_of_key(self.engine, key_text(key)):
            task = self.registry.tasks.get(row["task"])
            views.append(
                {
                    **row,
                    "kind": task.kind if task else row["task"],
                    "label": task.label if task else row["task"],
                }
            )
        return views + self.local.jobs(key)

    def busy(self, key: Hashable, kind: str | None = None) -> bool:
        """Whether `key` has jobs (of `kind`) waiting or running on any replica."""
        names = None if kind is None else tuple(n for n, t in self.registry.tasks.items() if t.kind == kind)
        return self.local.busy(key, kind) or (
            names != () and unfinished_count(self.engine, key_text(key), names) > 0
        )

    def wait(self, key: Hashable, kind: str | None = None, timeout: float = 30.0) -> bool:
        """Block until `key` has no unfinished jobs (of `kind`) anywhere; False on timeout."""
        deadline = time.monotonic() + timeout
        if not self.local.wait(key, kind, timeout):
            return False
        while self.busy(key, kind):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def summary(self) -> dict[str, Any]:
        """For an admin: counts per status, the oldest waiting job, recent failures (from the database)."""
        return {"engine": "procrastinate (PostgreSQL)", **queue_rows(self.engine)}

    # -- the worker -------------------------------------------------------------------------------------
    def start_worker(self) -> None:
        """Run a worker in this process (a daemon thread with its own event loop); idempotent."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run_worker, name=WORKER_THREAD, daemon=True)
            self._thread.start()

    def run_worker(self) -> None:
        """Run the worker until `close` (or the process ends): jobs, the owed-work sweep, stalled-job retries."""
        with self._stop_lock:
            if self._stopping:  # stopped before it began
                return
            self._loop = asyncio.new_event_loop()
            self._main = self._loop.create_task(self._run())
        try:
            self._loop.run_until_complete(self._main)
        except asyncio.CancelledError:
            pass
        finally:  # a sweep cancelled mid-way still runs in the loop's executor: let it finish first, so what it
            # queues is queued and it cannot reopen the deferring pool after stop_worker closed it
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()

    def stop_worker(self, timeout: float = 5.0) -> None:
        """Stop this replica's procrastinate worker and close its connections (the in-process worker it shares
        with the replica keeps running)."""
        with self._stop_lock:
            self._stopping = True
            if self._loop is not None and self._main is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._main.cancel)
        if self._thread is not None:
            self._thread.join(timeout)
        with self._defer_lock:
            if self._defer_open:
                self._defer_app.close()
                self._defer_open = False

    def close(self, timeout: float = 5.0) -> None:
        self.stop_worker(timeout)
        self.local.close(timeout)

    def _app(self) -> App:
        with self._defer_lock:
            if not self._defer_open:
                self._defer_app.open()
                self._defer_open = True
        return self._defer_app

    def worker_app(self) -> App:
        """An app whose tasks are the registry's, each wrapped to record its status and message."""
        app = App(connector=PsycopgConnector(conninfo=conninfo(self.engine), min_size=1, max_size=3))
        for task in self.registry.tasks.values():
            app.task(name=task.name, pass_context=True, retry=EngineRetry())(self._wrap(task))
        return app

    def _wrap(self, task: Task) -> Callable[..., None]:
        def run(job: EngineJobContext, **args: Any) -> None:
            job_id, key = str(job.job.id), job.job.lock or ""
            where = args.pop(TRACE_ARG, None) or {}
            ctx = for_person(self.context().with_job(job_id), args)
            try:  # the engine knows it runs; only what the job says is written here (one commit per job)
                with trace.bind(**where):  # its calls sit where the submitter's would have
                    message = task.run(ctx, args)
            except JobFailed as exc:
                record_job(self.engine, job_id, key, task.name, "failed", exc.message)
                raise
            except Exception as exc:
                log.exception("job %s (%s) failed", task.name, job_id)
                record_job(
                    self.engine, job_id, key, task.name, "failed", UNEXPECTED.format(name=type(exc).__name__)
                )
                raise
            record_job(self.engine, job_id, key, task.name, "done", message or "")

        run.__name__ = task.name.replace(".", "_")
        return run

    async def _run(self) -> None:
        app = self.worker_app()
        async with app.open_async():
            side = asyncio.create_task(self._sweep(app))
            try:
                self.started.set()
                await app.run_worker_async(
                    concurrency=self.concurrency,
                    install_signal_handlers=False,
                    update_heartbeat_interval=self.heartbeat,
                    stalled_worker_timeout=self.stalled_after,
                    fetch_job_polling_interval=self.poll,
                    shutdown_graceful_timeout=5.0,
                )
            finally:
                side.cancel()

    async def _requeue_stalled(self, app: App, job: Any) -> None:
        """A job whose worker died goes back in the queue with its id (the claims it made are still its own,
        and it keeps its place in its key's order). When an equal job already waits (the sweep queued the
        owed work again while this one looked alive), that newer one is cancelled first."""
        if job.queueing_lock:
            waiting = await asyncio.to_thread(waiting_job, self.engine, job.queueing_lock)
            if waiting is not None:
                await app.job_manager.cancel_job_by_id_async(waiting)
                record_job(self.engine, str(waiting), job.lock or "", job.task_name, "failed", REPLACED)
        await app.job_manager.retry_job(job)
        log.warning("job %s (%s) stalled on a dead worker: queued again", job.id, job.task_name)

    async def _sweep(self, app: App) -> None:
        """On start and every `sweep_every` seconds: put jobs of dead workers back in the queue, then queue
        what the database says is owed (pending extractions, missing summaries)."""
        while True:
            try:
                stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=self.stalled_after)
                for job in stalled:
                    await self._requeue_stalled(app, job)
                await asyncio.to_thread(requeue_owed, self.engine, self.registry, self.defer_owed, self.jobs)
            except Exception:  # the sweep must outlive a database blip; it runs again next round
                log.exception("job sweep failed")
            await asyncio.sleep(self.sweep_every)
