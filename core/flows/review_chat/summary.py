"""Segment summaries every 5 completed turns (spec 02 要約あり / 5の倍数)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.contracts.prompts import fill, load_prompt
from core.debuglog.events import DebugSink
from core.flows.review_chat.constants import FLOW, PROMPT_SUMMARIZE, STEP_SUMMARIZE, SUMMARY_EVERY_TURNS
from core.flows.review_chat.messages import plain_history
from core.flows.review_chat.models import ThreadState
from core.guard.json_guard import GuardResult, guarded_text
from core.llm.base import LLMClient
from core.store.review.repository import ReviewRepository

SPEAKERS = {"user": "【ユーザー】", "assistant": "【アシスタント】"}


def transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """The segment as plain text, one speaker label per message."""
    return "\n\n".join(f"{SPEAKERS[m['role']]}\n{m['content']}" for m in plain_history(messages))


def summarize_conversation_segment(
    messages: Sequence[Mapping[str, Any]], client: LLMClient, *, sink: DebugSink | None = None
) -> GuardResult[str]:
    """spec 02 `summarize_conversation_segment`: prompts/review_chat_summarize.txt over the segment
    (questions and viewpoints, answers given, open points). Free text through the guard, not streamed.
    """
    prompt = fill(load_prompt(PROMPT_SUMMARIZE).strip(), CONVERSATION=transcript(messages))
    return guarded_text(
        client, [{"role": "user", "content": prompt}], sink=sink, tags={"flow": FLOW, "step": STEP_SUMMARIZE}
    )


def segment_header(start_turn: int, end_turn: int) -> str:
    """`【1～5ターンの要約】` (spec 02 DB（Thread）conversation_summary)."""
    return f"【{start_turn}～{end_turn}ターンの要約】"


def due_summary_segment(state: ThreadState, completed_turns: int) -> tuple[int, int] | None:
    """The turns (start, end) to summarize now, or None. The end is the last multiple of 5 reached; a segment
    missed because its summary call failed is caught up at the next completed turn.
    """
    end = completed_turns // SUMMARY_EVERY_TURNS * SUMMARY_EVERY_TURNS
    if end <= state.summary_up_to_turn:
        return None
    return state.summary_up_to_turn + 1, end


def append_summary(state: ThreadState, start_turn: int, end_turn: int, text: str) -> ThreadState:
    """The state with `【start～endターンの要約】text` appended and `summary_up_to_turn = end`."""
    segment = f"{segment_header(start_turn, end_turn)}\n{text.strip()}"
    joined = f"{state.conversation_summary}\n\n{segment}" if state.conversation_summary else segment
    return replace(state, conversation_summary=joined, summary_up_to_turn=end_turn)


@dataclass
class SummaryOutcome:
    """What happened after a turn: the new state, and the summary call if one was due."""

    state: ThreadState
    result: GuardResult[str] | None = None
    segment: tuple[int, int] | None = None
    already_summarised: bool = False  # another job stored this segment first: this result was not used

    @property
    def failed(self) -> bool:
        return self.result is not None and not self.result.ok


def maybe_summarize(
    state: ThreadState,
    chat_history: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    sink: DebugSink | None = None,
) -> SummaryOutcome:
    """When turn 5, 10, 15 … has completed, summarize the turns since the last summary and append it.

    `chat_history` holds every completed rally including the one just finished. On failure the state is
    unchanged (the raw history keeps being sent) and the segment is retried after the next turn.
    """
    history = plain_history(chat_history)
    segment = due_summary_segment(state, len(history) // 2)
    if segment is None:
        return SummaryOutcome(state)
    start, end = segment
    result = summarize_conversation_segment(history[2 * (start - 1) : 2 * end], client, sink=sink)
    if not result.ok:
        return SummaryOutcome(state, result, segment)
    return SummaryOutcome(append_summary(state, start, end, result.text), result, segment)


def summarize_if_due(
    repo: ReviewRepository, client: LLMClient, thread_id: int, *, sink: DebugSink | None = None
) -> SummaryOutcome:
    """spec 02 要約 for a stored thread: when turn 5, 10, 15 … has completed, summarize the turns since the last
    summary and store it (`conversation_summary`, `summary_up_to_turn`; nothing else is written).

    It reads the thread from the repository only, so it can run apart from the turn (a background worker).
    On failure nothing is stored and the segment is retried after the next turn.
    """
    state = repo.thread_state(thread_id)
    history = [{"role": m.role, "content": m.content} for m in repo.load_messages(thread_id)]
    outcome = maybe_summarize(state, history, client, sink=sink)
    if outcome.result is not None and outcome.result.ok and not repo.save_summary(thread_id, outcome.state):
        # compare-and-set lost: a job on another replica (or a retry) summarised the segment first
        outcome.already_summarised = True
    return outcome
