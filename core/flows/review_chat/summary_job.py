"""The 5-turn summary as a background job (spec 02 要約 / 5の倍数).

The turn that completes turn 5, 10, … queues `summarize_if_due` for its thread and returns; the summary
lands in the thread columns (save_summary never moves them back). The next turn of the thread waits for a
summary still running, for a bounded time. A failed summary leaves the segment due: it is retried after
the next turn, or at once with the page's 再試行 (`summary_backlog` says which segment is missing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from core.clock import utc_now
from core.debuglog.events import DebugSink
from core.flows.review_chat.constants import SUMMARY_EVERY_TURNS
from core.flows.review_chat.notices import summary_notices
from core.flows.review_chat.summary import due_summary_segment, summarize_if_due
from core.jobs.queue import JobQueue, JobRef
from core.jobs.tasks import JobContext, JobFailed, OwedJob, Task, TaskRegistry
from core.llm.base import LLMClient
from core.store.review.repository import ReviewRepository, review_messages, review_threads

SUMMARY_JOB_KIND = "summary"
SUMMARY_JOB_LABEL = "会話の要約"
# Ours: how long the next turn waits for a summary still running before it goes on without it.
SUMMARY_WAIT_SECONDS = 20.0


def summary_job_key(thread_id: int, owner: str) -> tuple[str, str]:
    """The worker key of a thread's summary jobs (keyed by person and conversation; `owner` is the person's
    id)."""
    return (owner, f"review:{thread_id}")


def run_summary_task(ctx: JobContext, args: dict[str, Any]) -> str:
    """`summarize_if_due` as a job: the Japanese notice as its message (「すでに要約済み」 when another job
    stored the segment first), JobFailed when the call failed."""
    live = ctx.live.get("repo")
    repo = (
        live
        if isinstance(live, ReviewRepository)
        else ReviewRepository(ctx.engine, utc_now, owner_id=str(args["owner"]))
    )
    notices = summary_notices(
        outcome := summarize_if_due(repo, ctx.client, int(args["thread_id"]), sink=ctx.sink)
    )
    if outcome.failed:
        raise JobFailed(notices[0][1])
    return notices[0][1] if notices else ""


# one waiting summary per thread: a second defer while one waits is the same job
# a failed summary is not queued again by the sweep (the model may keep failing): the page offers 再試行
SUMMARY_TASK = Task(
    "review.summary",
    SUMMARY_JOB_KIND,
    SUMMARY_JOB_LABEL,
    run_summary_task,
    queueing_lock=True,
    requeue_after_failure=False,
)


def summary_job(
    repo: ReviewRepository, client: LLMClient, thread_id: int, sink: DebugSink | None = None
) -> Callable[[], str]:
    """The summary task as a closure on these live objects (scripts and tests that run it by hand)."""
    context = JobContext(repo.engine, client, sink, live={"repo": repo})
    return lambda: run_summary_task(context, {"owner": repo.owner_id, "thread_id": thread_id})


def submit_summary_job(
    worker: JobQueue,
    repo: ReviewRepository,
    client: LLMClient,
    thread_id: int,
    *,
    sink: DebugSink | None = None,
) -> JobRef | None:
    """Queue the thread's summary under its person's key (the repository's owner); None when the queue is
    full (the segment stays due). A summary already waiting for the thread is that job."""
    context = JobContext(repo.engine, client, sink, live={"repo": repo})
    args = {"owner": repo.owner_id, "thread_id": thread_id}
    return worker.defer(SUMMARY_TASK, summary_job_key(thread_id, repo.owner_id), args, context)


def owed_summaries(engine: Engine) -> list[OwedJob]:
    """Threads of every person whose due summary is missing (its job was lost or failed): a segment of
    SUMMARY_EVERY_TURNS completed turns beyond `summary_up_to_turn`."""
    answered = (
        select(review_messages.c.thread_id, func.count().label("n"))
        .where(review_messages.c.role == "assistant")
        .group_by(review_messages.c.thread_id)
        .subquery()
    )
    query = (
        select(review_threads.c.id, review_threads.c.owner_id)
        .join(answered, answered.c.thread_id == review_threads.c.id)
        .where(answered.c.n - review_threads.c.summary_up_to_turn >= SUMMARY_EVERY_TURNS)
        .order_by(review_threads.c.id)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        OwedJob(
            SUMMARY_TASK,
            summary_job_key(int(tid), str(owner)),
            {"owner": str(owner), "thread_id": int(tid)},
            SUMMARY_TASK.name,
        )
        for tid, owner in rows
    ]


def register_review_tasks(registry: TaskRegistry) -> None:
    """The review chat's summary task and its finder of owed summaries, for the composition root."""
    registry.add(SUMMARY_TASK)
    registry.owe(owed_summaries)


def wait_for_summary(
    worker: JobQueue, thread_id: int, owner: str, timeout: float = SUMMARY_WAIT_SECONDS
) -> bool:
    """Block until the thread's summary job (if any) has finished; False when `timeout` ran out first."""
    return worker.wait(summary_job_key(thread_id, owner), SUMMARY_JOB_KIND, timeout)


def summary_backlog(repo: ReviewRepository, thread_id: int) -> tuple[int, int] | None:
    """The segment (start, end) that should be summarised by now but is not (a failed or dropped summary)."""
    completed = sum(1 for m in repo.load_messages(thread_id) if m.role == "assistant")
    return due_summary_segment(repo.thread_state(thread_id), completed)
