"""How each flow is replayed: its real turn code on a fresh temporary store, and the
flow's key fields of a turn (knowledge: phase; memory: the persona's affect; diagnosis: the interview's
action and the urgency level; review chat: none, text only).

A runner is a function `run(user_input, turn_input, sink)` keeping the conversation between turns exactly
as the page does (chat items, interview / thread / diagnosis session ids); `turn_input` is the recorded
request where the text alone cannot rebuild it (diagnosis buttons, core.workbench.replay_diagnosis). The store
is SQLite in a temporary directory, deleted after; diagnosis searches the manuals it is given.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine

from core.debuglog.events import DebugEvent, DebugSink
from core.flows import review_chat
from core.flows.chat_item import ChatItem, assistant_item, history, user_item
from core.flows.diagnosis.constants import FLOW_TAG as DIAGNOSIS
from core.flows.diagnosis.deps import ManualSearch
from core.flows.knowledge.interview import FLOW as KNOWLEDGE
from core.flows.knowledge.interview import STEP_TURN
from core.flows.knowledge.stores import knowledge_stores
from core.flows.knowledge.turn import TurnInput
from core.flows.knowledge.turn import run_turn as knowledge_turn
from core.flows.memory.chat import run_turn as memory_turn
from core.flows.memory.constants import FLOW as MEMORY
from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.stores import memory_repository
from core.flows.memory.trailer import parse_trailer
from core.flows.review_chat.constants import FLOW as REVIEW
from core.flows.review_chat.constants import STEP_REPLY
from core.flows.review_chat.continuation import STEP_CONTINUE
from core.flows.review_chat.models import ReviewRecord
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON
from core.store import open_store
from core.workbench import replay_diagnosis as diagnosis

Runner = Callable[[str, dict[str, Any] | None, DebugSink], None]
Call = tuple[DebugEvent, DebugEvent | None]  # a call's last attempt and its result event

# The calls of a turn that are compared (background summaries and extraction are left out).
PRIMARY_STEPS: dict[str, frozenset[str]] = {
    KNOWLEDGE: frozenset({STEP_TURN}),
    REVIEW: frozenset({STEP_REPLY, STEP_CONTINUE}),
    MEMORY: frozenset({"chat", "continue"}),
    DIAGNOSIS: diagnosis.STEPS,
}
KEY_LABELS = {KNOWLEDGE: "フェーズ", MEMORY: "感情", DIAGNOSIS: "行動"}  # review chat: text only
SECOND_KEY_LABELS = {DIAGNOSIS: "緊急度"}  # a second compared field
# Flows whose turn may need no model call (a diagnosis button that only moves the interview on): such a
# turn is valid; in the others a turn without a call failed.
CALL_FREE_TURNS = frozenset({DIAGNOSIS})
# Flows whose recorded requests are replayed one by one, in log order (several requests may share a turn
# number: a diagnosis turn is numbered by its reply, and a button without a reply keeps the number).
REQUEST_TURNS = frozenset({DIAGNOSIS})
REPLAYABLE = tuple(PRIMARY_STEPS)


def key_value(flow: str, attempt: DebugEvent, result: DebugEvent | None) -> str:
    """The flow's key field of a call: the knowledge turn's phase, the memory reply's affect label."""
    if flow == KNOWLEDGE:
        parsed: Any = result.parsed if result is not None and result.parsed is not None else attempt.parsed
        state = parsed.get("state") if isinstance(parsed, dict) else None
        return str(state.get("phase", "")) if isinstance(state, dict) else ""
    if flow == MEMORY and attempt.raw and TRAILER_MARKER in attempt.raw:
        data, _ = parse_trailer(attempt.raw.rsplit(TRAILER_MARKER, 1)[1].strip())
        return str(data.get("persona_affect_label", "")) if data else ""
    return ""


def turn_keys(flow: str, calls: Sequence[Call]) -> tuple[str, str]:
    """The flow's key field of a turn (the last call that has one) and its second key field, if any."""
    if flow == DIAGNOSIS:
        return diagnosis.diagnosis_keys(calls)
    key = ""
    for attempt, result in calls:
        key = key_value(flow, attempt, result) or key
    return key, ""


def _knowledge(engine: Engine, client: LLMClient) -> Runner:
    repo = knowledge_stores(engine, LOCAL_PERSON).interviews
    items: list[ChatItem] = []
    interview: dict[str, str | None] = {"id": None}

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        outcome = knowledge_turn(
            items, TurnInput(text), interview_id=interview["id"], client=client, repo=repo, sink=sink
        )
        interview["id"] = outcome.interview_id

    return run


def _review(engine: Engine, client: LLMClient, material: ReviewRecord | None = None) -> Runner:
    """The review chat on `material` (the thread's own review, copied into the temporary store), or on the
    bundled sample review when the recorded thread's review is not known."""
    repo = review_chat.repository(engine, LOCAL_PERSON)
    review_id = repo.add_review(material) if material is not None else review_chat.sample_review_id(repo)
    review = repo.get_review(review_id)
    assert review is not None  # stored just above
    chat: list[ChatItem] = []
    thread: dict[str, int | None] = {"id": None}

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        prior = history(chat)
        chat.append(user_item(text))
        outcome = review_chat.run_turn(repo, client, review, thread["id"], prior, text, sink=sink)
        chat[-1:] = outcome.items
        thread["id"] = outcome.thread_id

    return run


def _memory(engine: Engine, client: LLMClient) -> Runner:
    repo = memory_repository(engine, LOCAL_PERSON)
    items: list[ChatItem] = []

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        prior = history(items)
        _, outcome = memory_turn(repo, None, client, [dict(i) for i in prior], text, sink=sink)
        items.append(user_item(text, status="done"))
        items.append(assistant_item(outcome.reply_text, status="done" if outcome.ok else "error"))

    return run


FACTORIES: dict[str, Callable[[Engine, LLMClient, ManualSearch | None, ReviewRecord | None], Runner]] = {
    KNOWLEDGE: lambda engine, client, _rag, _review_record: _knowledge(engine, client),
    REVIEW: lambda engine, client, _rag, review_record: _review(engine, client, review_record),
    MEMORY: lambda engine, client, _rag, _review_record: _memory(engine, client),
    DIAGNOSIS: lambda engine, client, rag, _review_record: diagnosis.diagnosis_runner(engine, client, rag),
}


@contextmanager
def open_runner(
    flow: str, client: LLMClient, *, rag: ManualSearch | None = None, review: ReviewRecord | None = None
) -> Iterator[Runner]:
    """A runner for `flow` on a fresh SQLite store in a temporary directory (removed afterwards); `rag`
    is the manual search diagnosis uses, `review` the review a review-chat thread was about (the sample
    review when None); other flows ignore them.

    Raises KeyError for a flow that is not replayable.
    """
    factory = FACTORIES[flow]
    with tempfile.TemporaryDirectory(prefix="katachi-replay-") as tmp:
        engine = open_store(tmp)
        try:
            yield factory(engine, client, rag, review)
        finally:
            engine.dispose()
