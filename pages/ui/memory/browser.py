"""Memory page, 記憶ブラウザ tab: filtered, paged tables with versioned edits; entities and edges; the affect
chart. The detail of one memory (versions, delete, provenance) is in memory_detail.py.

While a table has unsaved edits it keeps showing the rows as they were read (a changed frame would reset
the editor and drop the edits); saving checks each row's version, and a row changed since is not saved
but shown with both states and a choice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import altair as alt
import pandas as pd
import streamlit as st

from core.flows import memory as browse
from core.flows.memory import AFFECT_LABELS, AFFECT_LABELS_JA, EDITABLE_COLUMNS, affect_series
from pages.ui.memory import actions, grid
from pages.ui.memory.detail import render_detail, select_unit
from pages.ui.memory.entities import render_entity_tools

if TYPE_CHECKING:
    pass

TABLES = {
    "エピソード": "EPISODE",
    "事実": "FACT",
    "約束（ループ）": "LOOP",
    "サマリー": "SUMMARY",
    "エンティティ": "ENTITIES",
    "関係（エッジ）": "EDGES",
}
LABELS = list(AFFECT_LABELS)
AFFECT_COLORS = {"喜び": "#f2a900", "悲しみ": "#3b7dd8", "怒り": "#d62728", "不安": "#8e5cc4"}
STATE_JA = {"active": "有効", "deleted": "削除済み"}
EXTRACT_JA = {"done": "完了", "pending": "処理待ち", "failed": "失敗"}
SENSITIVITY_JA = {0: "0: 通常", 1: "1: 私的", 2: "2: 秘密（会話に注入しない）"}
PREDICATE_JA = {
    "name_is": "名前",
    "is_addressed_as": "呼び名",
    "likes": "好き",
    "dislikes": "苦手",
    "prefers": "好み",
    "uses": "使っている",
    "owns": "持っている",
    "affiliated_with": "所属",
    "located_in": "住んでいる場所",
    "operates_on": "取り組んでいること",
    "goal_is": "目標",
    "first_met_at": "出会った場所",
    "related_to": "関係",
}
ENTITY_COLUMNS = {
    "id": "ID",
    "type_label": "種類",
    "name": "名前",
    "aliases": "別名",
    "roles": "役割",
    "confidence": "確信度",
    "units": "記憶の数",
}
EDGE_COLUMNS = {
    "id": "ID",
    "src": "から",
    "relation": "関係",
    "dst": "へ",
    "weight": "重み",
    "evidence_unit_id": "根拠エピソード",
    "evidence_text": "根拠の引用",
    "last_seen_at": "最後に見た日時",
}
RELATION_JA = {
    "friend": "友人",
    "family": "家族",
    "colleague": "同僚",
    "romantic": "恋人",
    "likes": "好き",
    "dislikes": "苦手",
    "related": "関連",
    "other": "その他",
}
ENTITY_TYPE_JA = {"PERSON": "人物", "PLACE": "場所", "TOPIC": "話題", "THING": "もの", "ORG": "組織"}
ROLE_JA = {
    "speaker": "話し手",
    "person": "人物",
    "place": "場所",
    "topic": "話題",
    "mentioned": "言及",
    "fact": "事実",
    "loop": "約束",
    **RELATION_JA,
}


def speaker_name(name: str) -> str:
    """SPEAKER (the person talking to 灯) as ユーザー, also inside 「PERSON:SPEAKER」."""
    return name.replace("SPEAKER", "ユーザー")


SNIPPET_COLUMN = {
    "EPISODE": "input_text",
    "FACT": "object_text",
    "LOOP": "loop_text",
    "SUMMARY": "summary_text",
}
COLUMN_LABELS = {
    "id": "ID",
    "occurred_at": "日時",
    "state": "状態",
    "confidence": "確信度",
    "salience": "重要度",
    "sensitivity": "機微度",
    "pin": "固定",
    "topic_tags": "タグ",
    "input_text": "ユーザー",
    "reply_text": "灯の返答",
    "persona_affect_label": "感情",
    "persona_affect_intensity": "強さ",
    "extract_state": "抽出",
    "subject": "主語",
    "predicate": "述語",
    "object_text": "内容",
    "loop_text": "約束・続きの話題",
    "due_at": "期限",
    "expires_at": "自動削除",
    "summary_text": "要約",
    "scope_label": "種類",
    "scope_key": "対象",
    "source_unit_id": "元エピソード",
    "evidence_unit_ids_json": "根拠エピソード",
    "valid_from": "有効開始",
    "valid_to": "有効終了",
    "version": "版",
}

# What a row is about comes first, so it is on screen without scrolling sideways.
LEAD_COLUMNS = {
    "EPISODE": ("input_text", "reply_text", "persona_affect_label"),
    "FACT": ("subject", "predicate", "object_text"),
    "LOOP": ("loop_text", "due_at"),
    "SUMMARY": ("scope_label", "scope_key", "summary_text"),
}
# The text a person reads gets the room; short codes and numbers stay narrow (pixels: a cell shows ~35 characters).
COLUMN_WIDTHS: dict[str, Any] = {
    "input_text": 520,
    "reply_text": 420,
    "object_text": 260,
    "loop_text": 520,
    "summary_text": 560,
    "id": 60,
    "version": 50,
    "pin": 50,
}


def _option_label(labels: Mapping[Any, str]) -> Callable[[object], str]:
    """A select column's format_func: the option's Japanese label, or the option itself."""
    return lambda value: labels.get(value, str(value))


PERIODS = {"全期間": None, "直近7日": 7, "直近30日": 30, "直近90日": 90, "日付を指定": -1}


def _period(col: Any) -> list[dt.date]:
    """The period filter as [from, to] dates ([] for every date): a choice in words, and a date range only
    when one is asked for (an empty date box would show its English placeholder)."""
    choice = col.selectbox("期間", list(PERIODS), key="memory_f_period")
    days = PERIODS[choice]
    today = dt.date.today()
    if days is None:
        return []
    if days > 0:
        return [today - dt.timedelta(days=days), today]
    picked = col.date_input(
        "開始日〜終了日",
        value=(today - dt.timedelta(days=30), today),
        key="memory_f_dates",
        format="YYYY/MM/DD",
    )
    return list(picked) if isinstance(picked, tuple | list) else [picked]


def _entity_label(label: str) -> str:
    """「PERSON: 田中」 as 「人物: 田中」."""
    kind, sep, name = label.partition(": ")
    return f"{ENTITY_TYPE_JA.get(kind, kind)}{sep}{name}"


def _filters(kind: str) -> browse.Filters:
    with st.container(border=True):
        c = st.columns(4)
        state_label = c[0].selectbox("状態", ["すべて", "有効", "削除済み"], key="memory_f_state")
        dates = _period(c[1])
        entity_map = browse.entity_options(actions.repo())
        entity_id = c[2].selectbox(
            "エンティティ",
            [None, *entity_map],
            key="memory_f_entity",
            format_func=lambda i: "（すべて）" if i is None else _entity_label(entity_map[i]),
        )
        tag = c[3].text_input("タグを含む", key="memory_f_tag")
        c2 = st.columns(4)
        emotions = c2[0].multiselect(
            "感情ラベル",
            LABELS,
            key="memory_f_emotion",
            disabled=kind != "EPISODE",
            placeholder="すべて",
            format_func=lambda k: AFFECT_LABELS_JA[k],
        )
        sensitivity = c2[1].selectbox(
            "機微度（以下）",
            [2, 1, 0],
            key="memory_f_sens",
            format_func=lambda s: {2: "2: すべて", 1: "1: 私的まで", 0: "0: 通常のみ"}[s],
            help="0: 通常、1: 私的、2: 秘密。機微度2の記憶は会話に注入されません。",
        )
        page = c2[2].number_input("ページ", min_value=1, value=1, step=1, key="memory_f_page")
        size = c2[3].selectbox("1ページの件数", [20, 50, 100], key="memory_f_size")
    date_from = dates[0] if len(dates) >= 1 else None
    date_to = dates[1] if len(dates) == 2 else None
    return browse.Filters(
        {"すべて": "all", "有効": "active", "削除済み": "deleted"}[state_label],
        date_from,
        date_to,
        entity_id,
        tag.strip(),
        tuple(emotions),
        int(sensitivity),
        int(page),
        int(size),
    )


def _unit_table(kind: str) -> None:
    filters = _filters(kind)
    frame, total = grid.grid_frame(kind, filters)
    pages = max(1, -(-total // filters.page_size))
    st.caption(
        f"{total} 件中 {len(frame)} 件を表示（{filters.page}/{pages} ページ）。"
        "セルを編集して「変更を保存」を押すと、版（バージョン）として記録されます。"
    )
    editable = set(EDITABLE_COLUMNS[kind])
    config = {
        col: st.column_config.Column(
            COLUMN_LABELS.get(col, col), disabled=col not in editable, width=COLUMN_WIDTHS.get(col)
        )
        for col in frame.columns
    }
    config["state"] = st.column_config.SelectboxColumn(
        "状態", options=list(STATE_JA), format_func=_option_label(STATE_JA)
    )
    config["sensitivity"] = st.column_config.SelectboxColumn(
        "機微度",
        options=list(SENSITIVITY_JA),
        format_func=_option_label(SENSITIVITY_JA),
        help="2（秘密）にした記憶は、会話の返答に注入されません。",
    )
    config["pin"] = st.column_config.CheckboxColumn("固定")
    for col in ("confidence", "salience", "persona_affect_intensity"):
        if col in frame:
            config[col] = st.column_config.NumberColumn(
                COLUMN_LABELS[col], min_value=0.0, max_value=1.0, step=0.05
            )
    if "extract_state" in frame:
        config["extract_state"] = st.column_config.SelectboxColumn(
            "抽出", options=list(EXTRACT_JA), format_func=_option_label(EXTRACT_JA), disabled=True
        )
    if "persona_affect_label" in frame:
        config["persona_affect_label"] = st.column_config.SelectboxColumn(
            "感情", options=LABELS, format_func=_option_label(AFFECT_LABELS_JA)
        )
    if "predicate" in frame:
        config["predicate"] = st.column_config.SelectboxColumn(
            "述語",
            options=list(PREDICATE_JA),
            format_func=_option_label(PREDICATE_JA),
        )
    config["version"] = st.column_config.NumberColumn("版", disabled=True, help="表を読み込んだときの版")
    lead = ["id", *LEAD_COLUMNS.get(kind, ())]
    edited = st.data_editor(
        frame,
        column_config=config,
        column_order=[c for c in lead if c in frame] + [c for c in frame.columns if c not in lead],
        hide_index=True,
        width="stretch",
        num_rows="fixed",
        key=grid.editor_key(kind),
    )
    c = st.columns([1, 2])
    if c[0].button("変更を保存", key=f"memory_save_{kind}", icon=":material/save:", type="primary"):
        grid.save(kind, frame, edited)
    grid.render_stale(COLUMN_LABELS)
    if len(frame):
        ids = [int(i) for i in frame["id"]]
        snippets = dict(zip(ids, frame[SNIPPET_COLUMN[kind]].astype(str), strict=True))
        # the picker shows the memory the detail below shows, or nothing when that one is not in this table
        chosen = st.session_state.get("memory_unit_id")
        st.session_state["memory_pick"] = chosen if chosen in ids else None
        c[1].selectbox(
            "詳細を見る記憶",
            ids,
            key="memory_pick",
            placeholder="表の記憶から選ぶ",
            format_func=lambda i: f"#{i} {snippets.get(i, '')[:30]}",
            on_change=lambda: select_unit(st.session_state["memory_pick"] or 0),
        )


def _graph_table(
    frame: pd.DataFrame, name_columns: tuple[str, ...], labels: dict[str, str], note: str
) -> None:
    """Entities or edges: filter by name and type, page through them (read-only; edit via their units)."""
    with st.container(border=True):
        c = st.columns([2, 2, 1, 1])
        needle = c[0].text_input("名前を含む", key="memory_g_name").strip()
        types = sorted(frame["type_label"].unique()) if "type_label" in frame else []
        chosen = (
            c[1].pills(
                "種類（選ばなければすべて）",
                types,
                selection_mode="multi",
                key="memory_g_types",
                format_func=lambda t: ENTITY_TYPE_JA.get(t, t),
                disabled=not types,
            )
            or []
        )
        size = c[3].selectbox("1ページの件数", [50, 100, 200], key="memory_g_size")
        if needle:
            hit = pd.Series(False, index=frame.index)
            for col in name_columns:
                hit |= frame[col].astype(str).str.contains(needle, regex=False)
            frame = frame[hit]
        if chosen:
            frame = frame[frame["type_label"].isin(chosen)]
        pages = max(1, -(-len(frame) // size))
        page = min(pages, int(c[2].number_input("ページ", min_value=1, value=1, key="memory_g_page")))
    st.caption(
        f"{len(frame)} 件中 {min(size, len(frame) - (page - 1) * size)} 件を表示（{page}/{pages} ページ）。{note}"
    )
    shown = frame.iloc[(page - 1) * size : page * size].copy()
    if "type_label" in shown:  # words for the person reading; the store keeps PERSON / speaker ...
        shown["type_label"] = shown["type_label"].map(lambda t: ENTITY_TYPE_JA.get(t, t))
    if "roles" in shown:
        shown["roles"] = shown["roles"].map(
            lambda roles: [ROLE_JA.get(r, r) for r in roles] if isinstance(roles, list) else roles
        )
    for col in ("name", "src", "dst"):
        if col in shown:
            shown[col] = shown[col].map(lambda n: speaker_name(n) if isinstance(n, str) else n)
    st.dataframe(shown.rename(columns=labels), hide_index=True, width="stretch")


def render_browser() -> None:
    choice = st.segmented_control("表", list(TABLES), default="エピソード", key="memory_table")
    kind = TABLES.get(choice or "エピソード", "EPISODE")
    if kind == "ENTITIES":
        frame = browse.entities_frame(actions.repo())
        _graph_table(
            frame,
            ("name", "aliases"),
            ENTITY_COLUMNS,
            "人物・場所・話題など、会話から抽出された名前です（記憶の数の多い順）。",
        )
        render_entity_tools()
    elif kind == "EDGES":
        frame = browse.edges_frame(actions.repo())
        frame["relation"] = frame["relation"].map(lambda r: RELATION_JA.get(r, r))
        _graph_table(
            frame, ("src", "dst"), EDGE_COLUMNS, "エンティティ同士の関係と、その根拠になったエピソードです。"
        )
    else:
        _unit_table(kind)
    render_detail()
    st.markdown("#### 灯の感情の推移（週ごとの回数）")
    series = affect_series(actions.repo())
    if series.empty:
        st.caption("まだ感情の動いたエピソードがありません。")
    else:
        long = series.reset_index().melt(id_vars="week", var_name="感情", value_name="エピソード数")
        labels = list(series.columns)
        chart = (
            alt.Chart(long)
            .mark_bar()
            .encode(
                x=alt.X("week:N", title="週（月曜から）", axis=alt.Axis(labelAngle=0)),
                y=alt.Y("エピソード数:Q", title="エピソード数"),
                color=alt.Color(
                    "感情:N",
                    scale=alt.Scale(domain=labels, range=[AFFECT_COLORS.get(k, "#999999") for k in labels]),
                ),
                tooltip=[alt.Tooltip("week:N", title="週"), "感情:N", "エピソード数:Q"],
            )
        )
        st.altair_chart(chart, width="stretch")
        st.caption("灯がその週の会話で感じた感情ごとの回数です（「平常」は除く）。")
