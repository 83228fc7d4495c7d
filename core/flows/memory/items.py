"""A finished memory turn as the page's ChatItem (core/chat.py): the reply with what memory did in
`meta["details"]`, or the failure with its raw output and error type (spec 00 "chat"; spec 03: chat SSE)."""

from __future__ import annotations

from typing import Any

from core.chat import ChatItem, assistant_item, error_item
from core.flows.memory.chat import PreparedTurn, TurnOutcome

KIND_JA = {"EPISODE": "会話", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}
UNEXPECTED_ERROR = (
    "返答または記憶の処理中に予期しないエラーが発生しました。"
    "入力した文は残っています。「もう一度送る」で再送できます。"
)


def turn_details(prepared: PreparedTurn, outcome: TurnOutcome) -> dict[str, Any]:
    """What memory did for one reply: injected memories, facts, loops, mood, trailer or reflection,
    extraction and summaries (shown under the reply as 「このターンの記憶」)."""
    r = prepared.retrieval
    return {
        "episode_id": outcome.episode_id,
        "trace_id": outcome.trace_id,
        "memories": [
            {
                "ID": c.unit_id,
                "種類": KIND_JA.get(c.kind, c.kind),
                "スコア": round(c.final, 3),
                "内容": r.texts.get(c.unit_id, c.body)[:120],
            }
            for c in r.selected
        ],
        "facts": [r.texts.get(f["unit_id"], "") for f in r.facts],
        "loops": [lp["loop_text"] for lp in r.loops],
        "mood": prepared.mood.describe(),
        "trailer": outcome.trailer,
        "trailer_errors": outcome.trailer_errors,
        "reflection": outcome.reflection,
        "reflection_source": outcome.reflection_source,
        "extraction": outcome.extraction.summary() if outcome.extraction else None,
        "summaries": [
            s.label() + ("を作成" if s.ok else f"の作成に失敗（{s.message}）") for s in outcome.summaries
        ],
    }


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
