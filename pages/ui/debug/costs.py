"""The 「コストと傾向」 tab: tokens and cost per flow, session and conversation, latency per model, and
the attempts each guarded call needed per flow."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.prices import Price, costs_by, costs_by_flow, costs_by_session, total
from core.workbench.report import (
    attempts_per_flow,
    calls_frame,
    cost_chart_rows,
    cost_table,
    tokens_chart_rows,
)
from core.workbench.tree import ConversationNode
from pages.ui.debug import call as debug_call
from pages.ui.debug import source as debug_source
from pages.ui.debug.names import conversation_title
from pages.ui.shell import words

NAMES = alt.Axis(labelLimit=240, labelOverlap=False)


def _charts(tree: Sequence[ConversationNode], prices: Mapping[str, Price]) -> None:
    sums = {words.flow(flow): c for flow, c in costs_by_flow(tree, prices).items()}
    g1, g2 = st.columns(2)
    with g1:
        st.markdown("**フローごとの費用**")
        rows = cost_chart_rows(sums, "フロー")
        if rows.empty or not rows["費用"].any():
            # a chart of zero-height bars reads as broken: say why there is nothing to draw
            st.caption(
                "費用のかかった呼び出しはありません（デモモデルは無料です。価格のないモデルは表の「費用」に"
                "「価格未設定」と出ます）。"
            )
        else:
            chart = (
                alt.Chart(rows)
                .mark_bar()
                .encode(
                    y=alt.Y("フロー:N", title=None, axis=NAMES), x="費用:Q", color="通貨:N", yOffset="通貨:N"
                )
            )
            st.altair_chart(chart, width="stretch")
    with g2:
        st.markdown("**フローごとのトークン**")
        tokens = tokens_chart_rows(sums, "フロー")
        # bars run sideways so every flow's name fits on its own line
        chart = (
            alt.Chart(tokens)
            .mark_bar()
            .encode(y=alt.Y("フロー:N", title=None, axis=NAMES), x="トークン:Q", color="種類:N")
        )
        st.altair_chart(chart, width="stretch")
    st.dataframe(cost_table(sums, "フロー"), hide_index=True, width="stretch", key="debug_cost_flow")


def _latency(events: Sequence[DebugEvent]) -> None:
    frame = calls_frame(events)
    st.markdown("**モデルごとのレイテンシの分布**")
    if frame.empty:
        st.caption("呼び出しがありません。")
        return
    frame["モデル"] = frame["プロバイダー"].map(words.provider) + " / " + frame["モデル"]
    chart = (
        alt.Chart(frame[["モデル", "レイテンシ(ms)"]])
        .mark_boxplot(extent="min-max")
        .encode(x=alt.X("レイテンシ(ms):Q"), y=alt.Y("モデル:N", title=None, axis=alt.Axis(labelLimit=320)))
        .properties(height=40 * frame["モデル"].nunique())
    )
    st.altair_chart(chart, width="stretch", height=40 * frame["モデル"].nunique() + 60)
    summary = (
        frame.groupby("モデル")["レイテンシ(ms)"]
        .describe(percentiles=[0.5, 0.95])[["count", "50%", "95%", "max"]]
        .round(1)
        .rename(columns={"count": "呼び出し", "50%": "中央値(ms)", "95%": "p95(ms)", "max": "最大(ms)"})
        .reset_index()
    )
    summary["呼び出し"] = summary["呼び出し"].astype(int)
    st.dataframe(summary, hide_index=True, width="stretch", key="debug_latency_models")


def render(
    tree: Sequence[ConversationNode], events: Sequence[DebugEvent], prices: Mapping[str, Price]
) -> None:
    """Sums, charts and tables of the log."""
    whole = total([n for c in tree for n in c.all_calls()], prices)
    m = st.columns(4)
    m[0].metric("モデル呼び出し", f"{whole.calls:,}")
    m[1].metric("入力トークン", f"{whole.tokens.input:,}")
    m[2].metric("うちキャッシュ", f"{whole.tokens.cached_input:,}")
    m[3].metric("出力トークン", f"{whole.tokens.output:,}")
    debug_call.cost_line("費用（合計）", whole)
    debug_source.price_file_caption()
    _charts(tree, prices)
    _latency(events)
    st.markdown("**ガード付き呼び出し1回あたりの平均試行回数**")
    attempts = attempts_per_flow(events)
    if not attempts.empty:
        attempts["フロー"] = attempts["フロー"].map(words.flow)
        st.dataframe(attempts, hide_index=True, key="debug_attempts_flow")
    s1, s2 = st.columns(2)
    with s1:
        st.markdown("**セッションごと**")
        st.dataframe(
            cost_table(costs_by_session(tree, prices), "セッション"),
            hide_index=True,
            width="stretch",
            key="debug_cost_session",
        )
    with s2:
        st.markdown("**会話ごと**")
        by_conversation = costs_by(
            tree, prices, lambda c: conversation_title(c.flow, c.started_at, c.first_input, c.conversation_id)
        )
        st.dataframe(
            cost_table(by_conversation, "会話"),
            hide_index=True,
            width="stretch",
            key="debug_cost_conversation",
        )
