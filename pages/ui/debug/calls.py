"""The 「呼び出し一覧」 tab: every model call (attempt) as a table with filters (flow, result, provider,
calls with notes, note kinds), and the detail of the chosen call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.notes import KINDS, OTHER
from core.workbench.prices import Price
from core.workbench.ratings import Ratings
from core.workbench.report import calls_frame, filter_calls
from core.workbench.tree import CallNode, ConversationNode
from pages.ui.debug import call as debug_call
from pages.ui.shell.render import llm_label

HIDDEN = ["call_id", "index", "メモの種類"]


def _nodes_by_index(tree: Sequence[ConversationNode]) -> dict[int, CallNode]:
    return {i: node for c in tree for node in c.all_calls() for i in node.indexes}


def _filters(frame: pd.DataFrame) -> pd.DataFrame:
    with st.container(border=True):
        c1, c2, c3 = st.columns(3)
        flows = c1.multiselect(
            "フロー", sorted(frame["フロー"].unique()), key="debug_filter_flow", placeholder="すべて"
        )
        results = c2.multiselect(
            "結果", sorted(frame["結果"].unique()), key="debug_filter_result", placeholder="すべて"
        )
        providers = c3.multiselect(
            "プロバイダー",
            sorted(frame["プロバイダー"].unique()),
            key="debug_filter_provider",
            placeholder="すべて",
        )
        n1, n2 = st.columns([1, 2])
        with_notes = n1.checkbox("メモのある呼び出し", key="debug_filter_notes")
        negative = n1.checkbox(
            ":material/thumb_down: 低評価のターンの呼び出し",
            key="debug_filter_negative",
            help="各ページの返答の下で低評価（:material/thumb_down:）をつけたターンの呼び出し（要約などの後続の呼び出しを含む）だけを表示します。",
        )
        present = {k for kinds in frame["メモの種類"] for k in kinds}
        kinds = n2.multiselect(
            "メモの種類",
            [k for k, _ in KINDS if k in present] + ([OTHER] if OTHER in present else []),
            key="debug_filter_note_kinds",
            placeholder="すべて",
        )
    return filter_calls(
        frame, flows, results, providers, with_notes=with_notes, note_kinds=kinds, negative_only=negative
    )


def _label(row: pd.Series) -> str:
    return (
        f"#{int(row['index'])} {row['時刻']} {llm_label(row['フロー'])} / {llm_label(row['ステップ'])} "
        f"試行{row['試行']} → {llm_label(row['結果'])}"
    )


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
    m5.metric("中央値レイテンシ", f"{shown['レイテンシ(ms)'].median():.0f} ms" if len(shown) else "-")
    st.caption("表の行を選ぶか、下の一覧から選ぶと、その呼び出しの詳細を表示します。")
    table = st.dataframe(
        shown.drop(columns=HIDDEN),
        hide_index=True,
        width="stretch",
        key="debug_calls_table",
        on_select="rerun",
        selection_mode="single-row",
    )
    if shown.empty:
        st.write("条件に合う呼び出しはありません。")
        return
    labels = {int(r["index"]): _label(r) for _, r in shown.iterrows()}
    rows = table.selection.rows if table is not None else []
    table_pick = int(shown.iloc[rows[0]]["index"]) if rows else None
    if table_pick != st.session_state.get("debug_table_seen"):  # a new row selection moves the selectbox
        st.session_state["debug_table_seen"] = table_pick
        if table_pick is not None:
            st.session_state["debug_selected"] = table_pick
    if st.session_state.get("debug_selected") not in labels:
        st.session_state.pop("debug_selected", None)
    chosen = st.selectbox(
        "詳細を見る呼び出し", list(labels)[::-1], format_func=labels.__getitem__, key="debug_selected"
    )
    node = _nodes_by_index(tree).get(chosen) if chosen is not None else None
    if node is not None:
        debug_call.render(node, events, prices, key="debug_calls")
