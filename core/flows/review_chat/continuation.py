"""「続きを生成」 and 「再試行」 of a review reply cut short (spec 02 create_message).

The continuation rebuilds the turn's plan from the thread as stored (the same context and messages the
reply was asked with), sends it with the partial reply and the instruction to go on (core.guard.continuation),
appends what comes back to the reply and stores the longer reply (still marked truncated when it was cut
again). A retry removes the cut rally, in the store too, and hands back the question to send again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.debuglog.events import DebugSink
from core.flows.chat_item import ChatItem, history
from core.flows.review_chat.constants import FLOW, STEP_CONTINUE
from core.flows.review_chat.tracing import turn_trace
from core.flows.review_chat.turn import TurnPlan, prepare_review_turn
from core.guard.continuation import continuation_messages, cut_text, join_continuation
from core.guard.json_guard import GuardedStream, GuardResult, guarded_stream, guarded_text
from core.llm.base import LLMClient, Message
from core.store.review.models import ReviewRecord, ThreadState
from core.store.review.repository import ReviewRepository


@dataclass
class Continuation:
    """A cut reply about to be continued: where it is, what it says so far, the messages to send."""

    thread_id: int
    index: int  # of the assistant item in the chat list
    plan: TurnPlan
    partial: str
    messages: list[Message] = field(default_factory=list)


def last_cut_reply(items: list[ChatItem]) -> int | None:
    """The index of the chat's last item when it is a reply cut short, else None."""
    if items and items[-1]["role"] == "assistant" and items[-1]["status"] == "truncated":
        return len(items) - 1
    return None


def prepare_continuation(
    repo: ReviewRepository, review: ReviewRecord, thread_id: int, items: list[ChatItem]
) -> Continuation | None:
    """The continuation of the chat's last reply, or None when it was not cut short."""
    index = last_cut_reply(items)
    if index is None or index < 1:
        return None
    thread = repo.get_thread(thread_id)
    state = thread["state"] if thread else ThreadState()
    before = history(items[: index - 1])
    plan = prepare_review_turn(review, state, before, items[index - 1]["content"])
    partial = items[index]["content"]
    return Continuation(thread_id, index, plan, partial, continuation_messages(plan.messages, partial))


def stream_continuation(
    client: LLMClient, cont: Continuation, *, sink: DebugSink | None = None
) -> GuardedStream:
    """The continuation call, streamed (tags step=continue), logged under the thread and the cut turn."""
    with turn_trace(cont.thread_id, cont.plan.turn, cont.plan.user_input):
        return guarded_stream(client, cont.messages, sink=sink, tags={"flow": FLOW, "step": STEP_CONTINUE})


def request_continuation(
    client: LLMClient, cont: Continuation, *, sink: DebugSink | None = None
) -> GuardResult[str]:
    """The continuation call in one piece (tests, scripts)."""
    with turn_trace(cont.thread_id, cont.plan.turn, cont.plan.user_input):
        return guarded_text(client, cont.messages, sink=sink, tags={"flow": FLOW, "step": STEP_CONTINUE})


def finish_continuation(
    repo: ReviewRepository, items: list[ChatItem], cont: Continuation, result: GuardResult[str] | None
) -> GuardResult[str] | None:
    """Append what arrived to the reply (in `items` and in the store). A failed continuation with nothing
    to add leaves the reply as it was and returns the failed result (the page shows its message)."""
    more = result.text if result is not None and result.ok else cut_text(result)
    if not more:
        return result
    item = items[cont.index]
    item["content"] = join_continuation(cont.partial, more)
    still_cut = cut_text(result) is not None
    item["status"] = "truncated" if still_cut else "done"
    info = dict(item.get("meta", {}).get("info") or {})
    info.pop("truncated", None)
    if still_cut:
        info["truncated"] = True
    info["continued"] = int(info.get("continued", 0)) + 1
    item.setdefault("meta", {})["info"] = info
    repo.update_reply(cont.thread_id, cont.plan.turn, item["content"], info)
    return None


def continue_reply(
    repo: ReviewRepository,
    client: LLMClient,
    review: ReviewRecord,
    thread_id: int,
    items: list[ChatItem],
    *,
    sink: DebugSink | None = None,
) -> GuardResult[str] | None:
    """prepare -> request -> finish (no streaming); None when continued, else the failed result."""
    cont = prepare_continuation(repo, review, thread_id, items)
    if cont is None:
        return None
    return finish_continuation(repo, items, cont, request_continuation(client, cont, sink=sink))


def discard_cut_turn(repo: ReviewRepository, thread_id: int | None, items: list[ChatItem]) -> str | None:
    """「再試行」 of a cut reply: remove its rally from the chat and the store; returns the question to send
    again (None when the chat does not end in a cut reply)."""
    index = last_cut_reply(items)
    if index is None or index < 1:
        return None
    question = items[index - 1]["content"]
    turn = items[index].get("turn")
    del items[index - 1 :]
    if thread_id is not None and turn is not None:
        repo.delete_turn(thread_id, turn)
    return question
