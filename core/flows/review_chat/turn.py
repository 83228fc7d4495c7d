"""One review-chat turn: plan (paragraphs, context, messages) -> reply -> summary (spec 02 エントリポイント)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from core.debuglog.events import DebugSink
from core.flows.chat_item import meta
from core.flows.review_chat.constants import FLOW, STEP_REPLY
from core.flows.review_chat.context import ReviewContext, assemble_review_context
from core.flows.review_chat.messages import build_review_chat_messages, plain_history
from core.flows.review_chat.models import ReviewRecord, ThreadState
from core.flows.review_chat.persistence import ParagraphDecision, current_turn, resolve_paragraph_numbers
from core.flows.review_chat.summary import SummaryOutcome, due_summary_segment, maybe_summarize
from core.flows.review_chat.tracing import FirstTurnSink, turn_trace
from core.guard.json_guard import GuardedStream, GuardResult, guarded_stream, guarded_text
from core.llm.base import LLMClient, Message


@dataclass
class TurnPlan:
    """Everything decided before the call: the turn number, the paragraph rule, the context and messages."""

    turn: int
    user_input: str
    decision: ParagraphDecision
    context: ReviewContext
    messages: list[Message]
    summary_in_force: str
    summary_up_to_turn: int
    review_id: int | None = None  # set by chat_turn.prepare_turn: where the turn is stored
    thread_id: int | None = None  # None: a new thread, created when the first reply arrives
    held: FirstTurnSink | None = None  # a new thread's reply events, until its id is known (tracing.py)

    def hold(self, sink: DebugSink | None) -> DebugSink | None:
        """The sink for the reply call: a stored thread's sink as is; for a turn that creates its thread
        (planned by chat_turn.prepare_turn), one holding the events until `release`."""
        if sink is None or self.thread_id is not None or self.review_id is None:
            return sink
        self.held = FirstTurnSink(sink)
        return self.held

    def release(self, thread_id: int | None) -> None:
        """Forward the held reply events, stamped with the new thread's id (None: the turn failed)."""
        if self.held is not None:
            self.held.release(thread_id)

    @property
    def state_after(self) -> ThreadState:
        """The thread state once this turn succeeds (paragraph columns updated; summary not yet)."""
        return self.decision.state

    @property
    def summary_due(self) -> tuple[int, int] | None:
        """The turns (start, end) summarized right after this turn if it succeeds (spec 02 5の倍数), else None."""
        return due_summary_segment(self.state_after, self.turn)

    def info(self) -> dict[str, Any]:
        """A JSON-able account for the page's 「このターンでLLMに渡した情報」 (no block bodies, no secrets), kept
        in the reply's `meta["info"]` and stored with it; `turn_info_of` reads it back."""
        info = TurnInfo(
            turn=self.turn,
            blocks=[BlockInfo(b.header, b.reason, len(b.body)) for b in self.context.blocks],
            paragraph_numbers=self.decision.numbers,
            paragraph_source=self.decision.source,
            paragraph_from_turn=self.decision.from_turn,
            paragraph_rule=self.decision.describe(),
            summary_in_force=self.summary_in_force,
            summary_up_to_turn=self.summary_up_to_turn,
            message_count=len(self.messages),
            prompt_chars=sum(len(m["content"]) for m in self.messages),
        )
        return asdict(info)


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """A context block sent this turn: its header, why it was included, its length."""

    header: str
    reason: str
    chars: int


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """What the model was given for one reply (the page's 「このターンでLLMに渡した情報」)."""

    turn: int | None
    blocks: list[BlockInfo]
    paragraph_numbers: list[int]
    paragraph_source: str  # input | carried | none
    paragraph_from_turn: int | None
    paragraph_rule: str
    summary_in_force: str
    summary_up_to_turn: int | None
    message_count: int
    prompt_chars: int


def turn_info_of(item: Mapping[str, Any]) -> TurnInfo | None:
    """The turn info of a reply item (None for a user message, or a reply stored without it)."""
    data = meta(item).get("info")
    if not data:
        return None
    return TurnInfo(
        turn=data.get("turn"),
        blocks=[BlockInfo(b["header"], b["reason"], int(b["chars"])) for b in data.get("blocks") or []],
        paragraph_numbers=list(data.get("paragraph_numbers") or []),
        paragraph_source=str(data.get("paragraph_source") or "none"),
        paragraph_from_turn=data.get("paragraph_from_turn"),
        paragraph_rule=str(data.get("paragraph_rule") or ""),
        summary_in_force=str(data.get("summary_in_force") or ""),
        summary_up_to_turn=data.get("summary_up_to_turn"),
        message_count=int(data.get("message_count") or 0),
        prompt_chars=int(data.get("prompt_chars") or 0),
    )


def prepare_review_turn(
    review: ReviewRecord, state: ThreadState, chat_history: Sequence[Mapping[str, Any]], user_input: str
) -> TurnPlan:
    """spec 02 create_message: detect §N / 第N段落, decide the override, rebuild the context, build messages.

    `chat_history` holds the completed rallies before this turn. Nothing is stored here.
    """
    history = plain_history(chat_history)
    turn = current_turn(history)
    decision = resolve_paragraph_numbers(user_input, state, turn)
    context = assemble_review_context(
        review.question_text,
        review.review_json,
        user_input,
        review.purpose_text,
        review.grading_impression_text,
        review.answer_text,
        paragraph_numbers_override=decision.override,
    )
    messages = build_review_chat_messages(
        context.text,
        history,
        user_input,
        conversation_summary=state.conversation_summary,
        summary_up_to_turn=state.summary_up_to_turn,
    )
    return TurnPlan(
        turn, user_input, decision, context, messages, state.conversation_summary, state.summary_up_to_turn
    )


def request_review_reply(
    client: LLMClient, plan: TurnPlan, *, sink: DebugSink | None = None
) -> GuardResult[str]:
    """The reply call: free text through the guard (logged under the thread and turn, core.debuglog.trace)."""
    with turn_trace(plan.thread_id, plan.turn, plan.user_input):
        return guarded_text(
            client, plan.messages, sink=plan.hold(sink), tags={"flow": FLOW, "step": STEP_REPLY}
        )


def stream_review_reply(client: LLMClient, plan: TurnPlan, *, sink: DebugSink | None = None) -> GuardedStream:
    """The reply call, streamed: iterate for text deltas, then read `.result` (logged under the thread and
    turn, core.debuglog.trace)."""
    with turn_trace(plan.thread_id, plan.turn, plan.user_input):
        return guarded_stream(
            client, plan.messages, sink=plan.hold(sink), tags={"flow": FLOW, "step": STEP_REPLY}
        )


def finish_review_turn(
    plan: TurnPlan,
    chat_history: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    sink: DebugSink | None = None,
) -> SummaryOutcome:
    """After a successful reply: the new thread state, summarized when turn 5, 10, … has completed.

    `chat_history` must include this turn's user message and reply.
    """
    return maybe_summarize(plan.state_after, chat_history, client, sink=sink)


@dataclass
class TurnOutcome:
    """A turn without the store (run_review_turn): the plan, the reply, the state after it."""

    plan: TurnPlan
    reply: GuardResult[str]
    state: ThreadState
    summary: SummaryOutcome | None = None


def run_review_turn(
    client: LLMClient,
    review: ReviewRecord,
    state: ThreadState,
    chat_history: Sequence[Mapping[str, Any]],
    user_input: str,
    *,
    sink: DebugSink | None = None,
) -> TurnOutcome:
    """A whole turn without streaming (tests, benchmarks, scripts). On a failed reply the state is unchanged."""
    plan = prepare_review_turn(review, state, chat_history, user_input)
    reply = request_review_reply(client, plan, sink=sink)
    if not reply.ok:
        return TurnOutcome(plan, reply, state)
    history = [
        *plain_history(chat_history),
        {"role": "user", "content": user_input},
        {"role": "assistant", "content": reply.text},
    ]
    summary = finish_review_turn(plan, history, client, sink=sink)
    return TurnOutcome(plan, reply, summary.state, summary)
