"""Tables and figures over debug events for the debug-log page (pandas, no Streamlit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import pandas as pd

from core.clock import format_local
from core.debuglog import DebugEvent

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
    "出力トークン",
    "修復",
    "call_id",
    "index",
]


def calls_frame(events: Sequence[DebugEvent]) -> pd.DataFrame:
    """One row per model call (attempt), newest last; `index` points back into `events`."""
    rows = []
    for i, e in enumerate(events):
        if e.kind not in CALL_KINDS:
            continue
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
                "入力トークン": e.usage.get("input_tokens", 0),
                "出力トークン": e.usage.get("output_tokens", 0),
                "修復": ", ".join(e.fixes),
                "call_id": e.call_id,
                "index": i,
            }
        )
    return pd.DataFrame(rows, columns=CALL_COLUMNS)


def filter_calls(
    frame: pd.DataFrame, flows: Sequence[str] = (), results: Sequence[str] = (), providers: Sequence[str] = ()
) -> pd.DataFrame:
    """Rows whose flow / result / provider are among the chosen ones (an empty choice keeps all)."""
    mask = pd.Series(True, index=frame.index)
    for column, chosen in (("フロー", flows), ("結果", results), ("プロバイダー", providers)):
        if chosen:
            mask &= frame[column].isin(list(chosen))
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


def latency_per_flow(frame: pd.DataFrame) -> pd.DataFrame:
    """Median and max latency per flow, from calls_frame()."""
    if frame.empty:
        return pd.DataFrame(columns=["フロー", "中央値(ms)", "最大(ms)"])
    grouped = frame.groupby("フロー")["レイテンシ(ms)"]
    return pd.DataFrame({"中央値(ms)": grouped.median().round(1), "最大(ms)": grouped.max()}).reset_index()


class CallDetail(TypedDict):
    """One call of the debug log with the events of its guarded call."""

    event: DebugEvent
    repairs: list[DebugEvent]
    result: DebugEvent | None
    attempts: list[DebugEvent]


def call_detail(events: Sequence[DebugEvent], index: int) -> CallDetail:
    """Everything about one call: the event, plus the repair prompts and final result of its guarded call."""
    event = events[index]
    related = [e for e in events if e.call_id and e.call_id == event.call_id]
    return {
        "event": event,
        "repairs": [e for e in related if e.kind == "repair"],
        "result": next((e for e in related if e.kind == "result"), None),
        "attempts": [e for e in related if e.kind in CALL_KINDS],
    }
