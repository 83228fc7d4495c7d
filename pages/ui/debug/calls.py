"""The 「呼び出し一覧」 tab: every model call (attempt) as a table with filters (flow, result, provider,
calls with notes, note kinds), and the detail of the chosen call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.notes import KINDS, OTHER
from core.workbench.prices import Price
from core.workbench.ratings import Ratings
from core.workbench.report import calls_frame, filter_calls
from core.workbench.tree import CallNode, ConversationNode
from pages.ui.debug import call as debug_call
from pages.ui.debug.names import DEMO_LATENCY, DEMO_PROVIDER
from pages.ui.shell import words

HIDDEN = ["call_id", "index", "メモの種類"]
TABLE_KEY = "debug_calls_table"
PICKER_KEY = "debug_selected"
CHOSEN_KEY = "debug_chosen_call"  # data key: the index (into the log) of the call whose detail is shown
SHOWN_KEY = "debug_calls_shown"  # data key: the log indexes of the table's rows, in order


def _nodes_by_index(tree: Sequence[ConversationNode]) -> dict[int, CallNode]:
    return {i: node for c in tree for node in c.all_calls() for i in node.indexes}


def _pills(column: Any, label: str, values: list[str], key: str, words_of: Any) -> list[str]:
    """A multi-choice filter as pills (a multiselect would add its English 「Select all」); none = all."""
    chosen = column.pills(label, values, selection_mode="multi", format_func=words_of, key=key)
    return list(chosen or [])


def _filters(frame: pd.DataFrame) -> pd.DataFrame:
    with st.container(border=True):
        st.caption("何も選ばなければ、すべてを表示します。")
        flows = _pills(st, "フロー", sorted(frame["フロー"].unique()), "debug_filter_flow", words.flow)
        c2, c3 = st.columns(2)
        results = _pills(c2, "結果", sorted(frame["結果"].unique()), "debug_filter_result", words.result)
        providers = _pills(
            c3,
            "プロバイダー",
            sorted(frame["プロバイダー"].unique()),
            "debug_filter_provider",
            words.provider,
        )
        n1, n2 = st.columns([1, 2])
        with_notes = n1.checkbox("メモのある呼び出し", key="debug_filter_notes")
        negative = n1.checkbox(
            ":material/thumb_down: 低評価のターンの呼び出し",
            key="debug_filter_negative",
            help="各ページの返答の下で低評価（:material/thumb_down:）をつけたターンの呼び出し（要約などの後続の呼び出しを含む）だけを表示します。",
        )
        present = {k for kinds in frame["メモの種類"] for k in kinds}
        kinds = _pills(
            n2,
            "メモの種類",
            [k for k, _ in KINDS if k in present] + ([OTHER] if OTHER in present else []),
            "debug_filter_note_kinds",
            str,
        )
    return filter_calls(
        frame, flows, results, providers, with_notes=with_notes, note_kinds=kinds, negative_only=negative
    )


def _label(row: pd.Series) -> str:
    return (
        f"#{int(row['index'])} {row['時刻']} {words.flow(row['フロー'])} / {words.step(row['ステップ'])} "
        f"試行{row['試行']} → {words.result(row['結果'])}"
    )


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as staff read it: words in Japanese, the demo model's latency marked (raw values stay in the
    exports)."""
    out = frame.drop(columns=HIDDEN).copy()
    demo = out["プロバイダー"] == DEMO_PROVIDER
    out["フロー"] = out["フロー"].map(words.flow)
    out["ステップ"] = out["ステップ"].map(words.step)
    out["結果"] = out["結果"].map(words.result)
    out["プロバイダー"] = out["プロバイダー"].map(words.provider)
    out["修復"] = out["修復"].map(words.fixes)
    out["メモ"] = out["メモ"].map(words.notes)
    out["レイテンシ(ms)"] = [
        DEMO_LATENCY if is_demo else f"{ms:,.1f}"
        for is_demo, ms in zip(demo, out["レイテンシ(ms)"], strict=True)
    ]
    return out


def _pick_from_table() -> None:
    """A row chosen in the table becomes the chosen call (the table's own callback)."""
    rows = st.session_state[TABLE_KEY].selection.rows
    indexes = st.session_state.get(SHOWN_KEY, [])
    if rows and rows[0] < len(indexes):
        st.session_state[CHOSEN_KEY] = indexes[rows[0]]


def _pick_from_box() -> None:
    st.session_state[CHOSEN_KEY] = st.session_state[PICKER_KEY]


def render(
    tree: Sequence[ConversationNode],
    events: Sequence[DebugEvent],
    prices: Mapping[str, Price],
    ratings: Ratings | None = None,
) -> None:
    """The table, its filters and metrics, and the chosen call's detail (評価: the turn's rating)."""
    frame = calls_frame(events, prices, ratings or {})
    shown = _filters(frame)
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("呼び出し", len(shown))
    m2.metric("エラー", int((shown["結果"] != "ok").sum()))
    m3.metric("ローカル修復", int((shown["修復"] != "").sum()))
    m4.metric("メモあり", int((shown["メモ"] != "").sum()))
    m5.metric("中央値レイテンシ", _median_latency(shown))
    st.caption("表の行を選ぶか、下の一覧から選ぶと、その呼び出しの詳細を表示します。")
    indexes = [int(i) for i in shown["index"]]
    st.session_state[SHOWN_KEY] = indexes
    st.dataframe(
        _shown(shown),
        hide_index=True,
        width="stretch",
        key=TABLE_KEY,
        on_select=_pick_from_table,
        selection_mode="single-row",
    )
    if shown.empty:
        st.write("条件に合う呼び出しはありません。")
        return
    labels = {int(r["index"]): _label(r) for _, r in shown.iterrows()}
    options = indexes[::-1]
    # One source of truth (CHOSEN_KEY): the table and the list both set it, the list always shows it, and a
    # call the filters hide gives way to the newest shown one.
    if st.session_state.get(CHOSEN_KEY) not in labels:
        st.session_state[CHOSEN_KEY] = options[0]
    st.session_state[PICKER_KEY] = st.session_state[CHOSEN_KEY]
    chosen = st.selectbox(
        "詳細を見る呼び出し",
        options,
        format_func=labels.__getitem__,
        key=PICKER_KEY,
        on_change=_pick_from_box,
    )
    node = _nodes_by_index(tree).get(chosen) if chosen is not None else None
    if node is not None:
        debug_call.render(node, events, prices, key="debug_calls")


def _median_latency(shown: pd.DataFrame) -> str:
    measured = shown[shown["プロバイダー"] != DEMO_PROVIDER]["レイテンシ(ms)"]
    if len(measured):
        return f"{measured.median():.0f} ms"
    return "デモのみ（計測なし）" if len(shown) else "-"
