"""Tables and figures over debug events for the debug-log page (pandas, no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.clock import format_local
from core.debuglog.events import DebugEvent
from core.workbench.notes import event_notes
from core.workbench.notes import note_kind as note_kind_of
from core.workbench.prices import Cost, Price, event_cost
from core.workbench.ratings import Key, rating_of

RATING_WORDS = {0: "低評価", 1: "高評価"}  # words, not 👎/👍: a screen without an emoji font shows boxes
RATING_NEGATIVE = RATING_WORDS[0]
CALL_KINDS = ("call", "error")
CALL_COLUMNS = [
    "時刻",
    "フロー",
    "ステップ",
    "プロバイダー",
    "モデル",
    "試行",
    "結果",
    "レイテンシ(ms)",
    "入力トークン",
    "キャッシュ入力",
    "出力トークン",
    "費用",
    "修復",
    "メモ",
    "会話",
    "ターン",
    "評価",
    "メモの種類",
    "call_id",
    "index",
]


def calls_frame(
    events: Sequence[DebugEvent],
    prices: Mapping[str, Price] | None = None,
    ratings: Mapping[Key, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per model call (attempt), newest last; `index` points back into `events`. With `prices`,
    the 費用 column holds each attempt's cost (「価格未設定（model）」 for a model without a price).
    メモ holds the attempt's notes plus the note events of its call; メモの種類 their kinds. 評価 is the
    rating (高評価 👍 / 低評価 👎) of the turn the call belongs to (core.workbench.ratings), empty when not rated."""
    call_notes: dict[str, list[str]] = {}
    for e in events:
        if e.kind == "note" and e.call_id:
            call_notes.setdefault(e.call_id, []).extend(n.text for n in event_notes(e))
    rows = []
    for i, e in enumerate(events):
        if e.kind not in CALL_KINDS:
            continue
        notes = [n.text for n in event_notes(e)]
        if e.attempt <= 1:  # a call's note events are shown once, on its first attempt
            notes += call_notes.get(e.call_id, [])
        rows.append(
            {
                "時刻": format_local(e.ts, "%H:%M:%S"),
                "フロー": e.flow or "-",
                "ステップ": e.step or "-",
                "プロバイダー": e.provider,
                "モデル": e.model,
                "試行": e.attempt,
                "結果": "ok" if e.ok else (e.error_type or "error"),
                "レイテンシ(ms)": round(e.latency_ms or 0.0, 1),
                "入力トークン": int(e.usage.get("input_tokens", 0) or 0),
                "キャッシュ入力": int(e.usage.get("cached_input_tokens", 0) or 0),
                "出力トークン": int(e.usage.get("output_tokens", 0) or 0),
                "費用": event_cost(e, prices).text() if prices is not None else "",
                "修復": ", ".join(e.fixes),
                "メモ": " / ".join(notes),
                "会話": e.conversation_id or "（会話IDなし）",
                "ターン": e.turn,
                "評価": _rating_text(e, ratings),
                "メモの種類": sorted({note_kind_of(text) for text in notes}),
                "call_id": e.call_id,
                "index": i,
            }
        )
    return pd.DataFrame(rows, columns=CALL_COLUMNS)


def _rating_text(event: DebugEvent, ratings: Mapping[Key, Mapping[str, Any]] | None) -> str:
    found = rating_of(event, ratings) if ratings else None
    if found is None:
        return ""
    comment = str(found.get("comment") or "")
    word = RATING_WORDS.get(int(found.get("score", -1)), "")
    return f"{word}「{comment}」" if comment else word


def filter_calls(
    frame: pd.DataFrame,
    flows: Sequence[str] = (),
    results: Sequence[str] = (),
    providers: Sequence[str] = (),
    *,
    with_notes: bool = False,
    note_kinds: Sequence[str] = (),
    negative_only: bool = False,
) -> pd.DataFrame:
    """Rows whose flow / result / provider are among the chosen ones (an empty choice keeps all);
    `with_notes` keeps calls with a note, `note_kinds` calls with a note of one of those kinds,
    `negative_only` the calls of turns rated 👎."""
    mask = pd.Series(True, index=frame.index)
    for column, chosen in (("フロー", flows), ("結果", results), ("プロバイダー", providers)):
        if chosen:
            mask &= frame[column].isin(list(chosen))
    if with_notes:
        mask &= frame["メモ"] != ""
    if negative_only:
        mask &= frame["評価"].str.startswith(RATING_NEGATIVE)
    if note_kinds:
        wanted = set(note_kinds)
        mask &= frame["メモの種類"].apply(lambda kinds: bool(wanted & set(kinds)))
    return frame[mask]


def attempts_per_flow(events: Sequence[DebugEvent]) -> pd.DataFrame:
    """Guarded calls per flow: how many model calls each needed (from `result` events), and how many failed."""
    rows = [
        {"フロー": e.flow or "-", "試行回数": e.attempt, "成功": bool(e.ok)}
        for e in events
        if e.kind == "result"
    ]
    frame = pd.DataFrame(rows, columns=["フロー", "試行回数", "成功"])
    if frame.empty:
        return pd.DataFrame(columns=["フロー", "平均試行回数", "呼び出し数", "失敗数"])
    grouped = frame.groupby("フロー")
    return pd.DataFrame(
        {
            "平均試行回数": grouped["試行回数"].mean().round(2),
            "呼び出し数": grouped.size(),
            "失敗数": grouped["成功"].apply(lambda s: int((~s).sum())),
        }
    ).reset_index()


COST_COLUMNS = ["呼び出し", "入力トークン", "キャッシュ入力", "出力トークン", "費用"]


def cost_table(sums: Mapping[str, Cost], label: str) -> pd.DataFrame:
    """One row per key of `sums` (flow, session, conversation, ...): model calls, tokens, cost text."""
    rows = [
        {
            label: key,
            "呼び出し": c.calls,
            "入力トークン": c.tokens.input,
            "キャッシュ入力": c.tokens.cached_input,
            "出力トークン": c.tokens.output,
            "費用": c.text(),
        }
        for key, c in sums.items()
    ]
    return pd.DataFrame(rows, columns=[label, *COST_COLUMNS])


def cost_chart_rows(sums: Mapping[str, Cost], label: str) -> pd.DataFrame:
    """Long rows for a chart: one per (key, currency) with the amount as a float (unpriced calls add
    nothing here; the table says 「価格未設定」)."""
    rows = [
        {label: key, "通貨": currency, "費用": float(amount)}
        for key, c in sums.items()
        for currency, amount in sorted(c.amounts.items())
    ]
    return pd.DataFrame(rows, columns=[label, "通貨", "費用"])


def tokens_chart_rows(sums: Mapping[str, Cost], label: str) -> pd.DataFrame:
    """Long rows for a stacked token chart: uncached input, cached input and output per key."""
    rows = []
    for key, c in sums.items():
        for kind, value in (
            ("入力（キャッシュなし）", c.tokens.input - c.tokens.cached_input),
            ("入力（キャッシュ）", c.tokens.cached_input),
            ("出力", c.tokens.output),
        ):
            rows.append({label: key, "種類": kind, "トークン": value})
    return pd.DataFrame(rows, columns=[label, "種類", "トークン"])
