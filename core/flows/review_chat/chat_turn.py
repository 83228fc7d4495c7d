"""One review-chat turn with its thread in the store: prepare -> stream (or request) -> finish.

spec 02 create_message: the thread columns are read, the context and messages rebuilt, the reply asked for;
once it arrives the rally and the paragraph columns are stored, then the summary made when 5, 10, … turns
have completed. The page streams between `prepare_turn` and `finish_turn`; `run_turn` does all three.
Nothing is stored for a failed reply. A reply cut short (token limit, or a stream that broke after some text:
core.guard.continuation.cut_text) is shown and stored marked truncated; `continuation.py` continues it.

With a worker the summary is a background job (core/flows/review_chat/summary_job.py): the turn
returns once the rally is saved, and the next turn waits for a summary still running (bounded).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.debuglog import trace
from core.debuglog.events import DebugSink
from core.debuglog.kept_going import kept_going
from core.flows.chat_item import ChatItem, assistant_item, error_item, user_item
from core.flows.review_chat.notices import (
    STORE_FAILED,
    UNEXPECTED_AFTER,
    UNEXPECTED_REPLY,
    Notice,
    summary_notices,
)
from core.flows.review_chat.summary import SummaryOutcome, summarize_if_due
from core.flows.review_chat.summary_job import (
    SUMMARY_WAIT_SECONDS,
    submit_summary_job,
    wait_for_summary,
)
from core.flows.review_chat.tracing import turn_trace
from core.flows.review_chat.turn import (
    TurnPlan,
    prepare_review_turn,
    request_review_reply,
    stream_review_reply,
)
from core.guard.continuation import cut_text
from core.guard.json_guard import GuardResult
from core.jobs.queue import JobQueue
from core.llm.base import LLMClient
from core.store.review.models import ReviewRecord, ThreadState
from core.store.review.repository import ReviewRepository
from core.text.safe import clean_text

log = logging.getLogger(__name__)

UNEXPECTED_ERROR = "unexpected_error"

# The reply call of a prepared turn (spec 02 LLM呼び出し): streamed for the page, or in one piece.
stream_reply = stream_review_reply
request_reply = request_review_reply


@dataclass
class TurnResult:
    """What a finished turn hands back: the chat items replacing the pending question, the thread id
    (new after a first reply), Japanese notices, and what happened (stored, summary)."""

    items: list[ChatItem]
    thread_id: int | None
    notices: list[Notice] = field(default_factory=list)
    plan: TurnPlan | None = None
    reply: GuardResult[str] | None = None
    stored: bool = False
    summary: SummaryOutcome | None = None  # the summary made inline (no worker)
    summary_job: str | None = None  # the id of the summary job queued on the worker

    @property
    def ok(self) -> bool:
        return self.reply is not None and self.reply.ok

    @property
    def truncated(self) -> bool:
        """The reply was cut short (shown, stored, marked 「途中で途切れました」)."""
        return bool(self.items) and self.items[-1]["status"] == "truncated"


def prepare_turn(
    repo: ReviewRepository,
    review: ReviewRecord,
    thread_id: int | None,
    chat_history: Sequence[Mapping[str, Any]],
    user_input: str,
    *,
    worker: JobQueue | None = None,
    wait: float = SUMMARY_WAIT_SECONDS,
) -> TurnPlan:
    """spec 02 create_message, before the call: read the thread columns (a missing thread starts a new one)
    and plan the turn with `prepare_review_turn`. `chat_history` holds the completed rallies. The repository
    is the person's: another person's thread id is treated as a missing thread.

    A summary of this thread still running on `worker` is waited for, at most `wait` seconds; after that the
    turn goes on with the un-summarised history (as when a summary fails) and the summary lands later.
    """
    if review.id is None:
        raise ValueError("the review must be stored before a thread can be kept for it")
    if worker is not None and thread_id is not None:
        wait_for_summary(worker, thread_id, repo.owner_id, wait)
    thread = repo.get_thread(thread_id) if thread_id is not None else None
    plan = prepare_review_turn(review, thread["state"] if thread else ThreadState(), chat_history, user_input)
    plan.review_id, plan.thread_id = review.id, thread["id"] if thread else None
    return plan


def failed_turn(plan: TurnPlan, reply: GuardResult[str]) -> TurnResult:
    """A reply that failed: the question is kept (marked), the guard's message shown; nothing is stored."""
    plan.release(None)
    items = [
        user_item(plan.user_input, turn=plan.turn, status="error"),
        error_item(reply.message, error_type=reply.error_type, raw=reply.raw, turn=plan.turn),
    ]
    return TurnResult(items, plan.thread_id, plan=plan, reply=reply)


def unexpected_failure(user_input: str, *, thread_id: int | None = None) -> TurnResult:
    """An error nobody translated (a bug, a broken client) before the reply arrived: the question is kept,
    marked, with a Japanese message and a retry; never a traceback. Nothing is stored."""
    items = [
        user_item(user_input, status="error"),
        error_item(UNEXPECTED_REPLY, error_type=UNEXPECTED_ERROR),
    ]
    return TurnResult(items, thread_id)


def finish_turn(
    repo: ReviewRepository,
    client: LLMClient,
    plan: TurnPlan,
    reply: GuardResult[str] | None,
    *,
    sink: DebugSink | None = None,
    worker: JobQueue | None = None,
    job_sink: DebugSink | None = None,
) -> TurnResult:
    """spec 02 create_message, after the call: on success create the thread if needed, store the rally with
    the paragraph columns (§N の持続), then `summarize_if_due` (要約 / 5の倍数). On failure nothing is stored.
    A reply that arrived is always returned, also when storing or summarizing failed (a notice says so).

    With `worker` the due summary is queued as a job of the repository's person (its calls go to `job_sink`,
    default `sink`)
    and the turn returns after one model call; a full queue leaves the segment due for the next turn.
    """
    if reply is None:
        raise ValueError("the reply stream was not read to its end")
    cut = cut_text(reply)
    if not reply.ok and cut is None:
        return failed_turn(plan, reply)
    text = clean_text(reply.value if cut is None else cut)[0]  # what is shown is what is stored
    info = plan.info() | ({"truncated": True} if cut is not None else {})
    items = [
        user_item(plan.user_input, turn=plan.turn, status="done"),
        assistant_item(text, turn=plan.turn, info=info)
        if cut is None
        else assistant_item(text, turn=plan.turn, status="truncated", raw=reply.raw, info=info),
    ]
    result = TurnResult(items, plan.thread_id, plan=plan, reply=reply)
    try:
        if result.thread_id is None:
            assert plan.review_id is not None, "plan the turn with prepare_turn"
            result.thread_id = repo.create_thread(plan.review_id)
        plan.release(result.thread_id)
        repo.save_turn(result.thread_id, plan.turn, plan.user_input, text, plan.state_after, info)
    except (SQLAlchemyError, KeyError):  # KeyError: the thread or review is not this person's
        plan.release(None)
        result.notices.append(("error", STORE_FAILED))
        return result
    result.stored = True
    # the summary (inline or on the worker, which keeps this context) hangs under this turn's reply
    with turn_trace(result.thread_id, plan.turn, plan.user_input), trace.child_of(reply.call_id):
        return _summarize(repo, client, plan, result, sink=sink, worker=worker, job_sink=job_sink)


def _summarize(
    repo: ReviewRepository,
    client: LLMClient,
    plan: TurnPlan,
    result: TurnResult,
    *,
    sink: DebugSink | None,
    worker: JobQueue | None,
    job_sink: DebugSink | None,
) -> TurnResult:
    """The due summary of a stored turn: queued on `worker`, else made inline (notices on the result)."""
    assert result.thread_id is not None
    if worker is not None:
        if plan.summary_due is not None:
            job_sink = sink if job_sink is None else job_sink
            job = submit_summary_job(worker, repo, client, result.thread_id, sink=job_sink)
            result.summary_job = job.id if job is not None else None
        return result
    try:
        result.summary = summarize_if_due(repo, client, result.thread_id, sink=sink)
    except Exception:  # noqa: BLE001 - the reply is shown and stored; a bug after it must not hide it
        kept_going(log, "summary after a stored reply failed", sink, step="summary")
        result.notices.append(("error", UNEXPECTED_AFTER))
        return result
    result.notices.extend(summary_notices(result.summary))
    return result


def run_turn(
    repo: ReviewRepository,
    client: LLMClient,
    review: ReviewRecord,
    thread_id: int | None,
    chat_history: Sequence[Mapping[str, Any]],
    user_input: str,
    *,
    sink: DebugSink | None = None,
    worker: JobQueue | None = None,
) -> TurnResult:
    """prepare_turn -> request_reply -> finish_turn (no streaming: tests, scripts), failing like the page."""
    try:
        plan = prepare_turn(repo, review, thread_id, chat_history, user_input, worker=worker)
        reply = request_reply(client, plan, sink=sink)
    except Exception:  # noqa: BLE001 - as on the page: an untranslated error becomes a message, not a traceback
        kept_going(log, "review turn failed before a reply", sink, step="turn")
        return unexpected_failure(user_input, thread_id=thread_id)
    return finish_turn(repo, client, plan, reply, sink=sink, worker=worker)
