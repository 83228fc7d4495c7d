"""A finished memory turn as the page's ChatItem (core/flows/chat_item.py): the reply with what memory did in
`meta["details"]`, or the failure with its raw output and error type (spec 00 "chat"; spec 03: chat SSE).

What the background job does after the reply (reflection, extraction, summaries) fills the details in from
the store: `refresh_items`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from core.flows.chat_item import ChatItem, assistant_item, error_item, meta
from core.flows.memory.background import summary_line
from core.flows.memory.chat import INLINE, PreparedTurn, TurnOutcome
from core.flows.memory.job_status import background_states
from core.store.memory.repository import MemoryRepository

KIND_JA = {"EPISODE": "会話", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}
UNEXPECTED_ERROR = (
    "返答または記憶の処理中に予期しないエラーが発生しました。"
    "入力した文は残っています。「再試行」で再送できます。"
)


@dataclass(frozen=True, slots=True)
class TurnDetails:
    """What memory did for one reply (shown under it as 「このターンの記憶」). The chat item keeps it as JSON in
    `meta["details"]` (the conversation is stored); `turn_details_of` reads it back for the page."""

    episode_id: int | None
    trace_id: int | None
    memories: list[dict[str, Any]]  # table rows as shown: ID, 種類, スコア, 内容
    facts: list[str]
    loops: list[str]
    mood: str
    trailer: dict[str, Any] | None  # the model's trailer JSON as validated
    trailer_errors: list[str]
    reflection: dict[str, Any] | None  # the reflection call's JSON (or the defaults)
    reflection_source: str  # trailer | reflection | default | pending
    extraction: dict[str, Any] | None  # ExtractionOutcome.summary(), stored as JSON
    summaries: list[str]
    pending: bool  # the background job's results are still to come
    background: str  # how the job was queued (chat.INLINE, or the queue's answer)


def turn_details(prepared: PreparedTurn, outcome: TurnOutcome) -> dict[str, Any]:
    """What memory did for one reply as the JSON kept in the item's `meta["details"]`: injected memories,
    facts, loops, mood, trailer or reflection, extraction and summaries."""
    r = prepared.retrieval
    details = TurnDetails(
        episode_id=outcome.episode_id,
        trace_id=outcome.trace_id,
        memories=[
            {
                "ID": c.unit_id,
                "種類": KIND_JA.get(c.kind, c.kind),
                "スコア": round(c.final, 3),
                "内容": r.texts.get(c.unit_id, c.body)[:120],
            }
            for c in r.selected
        ],
        facts=[r.texts.get(f.unit_id, "") for f in r.facts],
        loops=[lp["loop_text"] for lp in r.loops],
        mood=prepared.mood.describe(),
        trailer=outcome.trailer,
        trailer_errors=outcome.trailer_errors,
        reflection=outcome.reflection,
        reflection_source=outcome.reflection_source,
        extraction=outcome.extraction.summary() if outcome.extraction else None,
        summaries=[summary_line(s) for s in outcome.summaries],
        pending=outcome.background != INLINE,
        background=outcome.background,
    )
    return asdict(details)


def turn_details_of(item: Mapping[str, Any]) -> TurnDetails | None:
    """The details of a reply item (None for a user message, a failure, or an item stored without them)."""
    data = meta(item).get("details")
    if not data:
        return None
    return TurnDetails(
        episode_id=data.get("episode_id"),
        trace_id=data.get("trace_id"),
        memories=list(data.get("memories") or []),
        facts=list(data.get("facts") or []),
        loops=list(data.get("loops") or []),
        mood=str(data.get("mood") or ""),
        trailer=data.get("trailer"),
        trailer_errors=list(data.get("trailer_errors") or []),
        reflection=data.get("reflection"),
        reflection_source=str(data.get("reflection_source") or ""),
        extraction=data.get("extraction"),
        summaries=list(data.get("summaries") or []),
        pending=bool(data.get("pending")),
        background=str(data.get("background") or ""),
    )


def apply_background(details: dict[str, Any], state: dict[str, Any]) -> None:
    """Fill one reply's details from its episode's stored background state (`background_states`)."""
    details["reflection"], details["reflection_source"] = state["reflection"], state["reflection_source"]
    if state["extraction"] is not None:
        details["extraction"] = state["extraction"]
    if state["finished"]:
        details["summaries"] = list(state["summaries"])
    details["extract_state"] = state["extract_state"]
    details["pending"] = not state["finished"]


def refresh_items(repo: MemoryRepository, items: Sequence[ChatItem]) -> bool:
    """Re-read from the store what the background work did for each reply of the chat (two queries);
    True while some reply's work is still to land."""
    details = [d for item in items if (d := meta(item).get("details")) and d.get("episode_id") is not None]
    states = background_states(repo, [d["episode_id"] for d in details])
    for d in details:
        state = states.get(d["episode_id"])
        if state is not None:  # a deleted episode keeps what was shown
            apply_background(d, state)
    return any(d.get("pending") for d in details)


def reply_item(prepared: PreparedTurn, outcome: TurnOutcome, turn: int | None = None) -> ChatItem:
    """The assistant item of a turn: "done" (or "truncated") with details, or "error" with raw and type."""
    if not outcome.ok:
        return error_item(outcome.error, error_type=outcome.error_type, raw=outcome.raw, turn=turn)
    return assistant_item(
        outcome.reply_text,
        turn=turn,
        status="truncated" if outcome.truncated else "done",
        raw=outcome.raw,
        details=turn_details(prepared, outcome),
    )


def unexpected_error_item(turn: int | None = None) -> ChatItem:
    """The assistant item when the turn raised (the store or index failed): the input stays for 再送."""
    return error_item(UNEXPECTED_ERROR, error_type=None, turn=turn)
