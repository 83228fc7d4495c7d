"""The 5-turn summary as a background job (spec 02 要約 / 5の倍数).

The turn that completes turn 5, 10, … queues `summarize_if_due` for its thread and returns; the summary
lands in the thread columns (save_summary never moves them back). The next turn of the thread waits for a
summary still running, for a bounded time. A failed summary leaves the segment due: it is retried after
the next turn, or at once with the page's 再試行 (`summary_backlog` says which segment is missing).
"""

from __future__ import annotations

from collections.abc import Callable

from core.debuglog.events import DebugSink
from core.flows.review_chat.notices import summary_notices
from core.flows.review_chat.summary import due_summary_segment, summarize_if_due
from core.jobs.worker import BackgroundWorker, Job, JobFailed
from core.llm.base import LLMClient
from core.store.review.repository import ReviewRepository

SUMMARY_JOB_KIND = "summary"
SUMMARY_JOB_LABEL = "会話の要約"
# Ours: how long the next turn waits for a summary still running before it goes on without it.
SUMMARY_WAIT_SECONDS = 20.0


def summary_job_key(thread_id: int, owner: str) -> tuple[str, str]:
    """The worker key of a thread's summary jobs (keyed by person and conversation; `owner` is the person's
    id)."""
    return (owner, f"review:{thread_id}")


def summary_job(
    repo: ReviewRepository, client: LLMClient, thread_id: int, sink: DebugSink | None = None
) -> Callable[[], str]:
    """`summarize_if_due` as a worker job: the Japanese notice as its message, JobFailed when the call failed."""

    def run() -> str:
        notices = summary_notices(outcome := summarize_if_due(repo, client, thread_id, sink=sink))
        if outcome.failed:
            raise JobFailed(notices[0][1])
        return notices[0][1] if notices else ""

    return run


def submit_summary_job(
    worker: BackgroundWorker,
    repo: ReviewRepository,
    client: LLMClient,
    thread_id: int,
    *,
    sink: DebugSink | None = None,
) -> Job | None:
    """Queue the thread's summary under its person's key (the repository's owner); None when the queue is
    full (the segment stays due)."""
    return worker.submit(
        summary_job_key(thread_id, repo.owner_id),
        SUMMARY_JOB_KIND,
        SUMMARY_JOB_LABEL,
        summary_job(repo, client, thread_id, sink),
    )


def wait_for_summary(
    worker: BackgroundWorker, thread_id: int, owner: str, timeout: float = SUMMARY_WAIT_SECONDS
) -> bool:
    """Block until the thread's summary job (if any) has finished; False when `timeout` ran out first."""
    return worker.wait(summary_job_key(thread_id, owner), SUMMARY_JOB_KIND, timeout)


def summary_backlog(repo: ReviewRepository, thread_id: int) -> tuple[int, int] | None:
    """The segment (start, end) that should be summarised by now but is not (a failed or dropped summary)."""
    completed = sum(1 for m in repo.load_messages(thread_id) if m.role == "assistant")
    return due_summary_segment(repo.thread_state(thread_id), completed)
