"""Memory page, 記憶ブラウザ tab: filtered, paged tables; versioned edits; delete; provenance; affect chart."""

from __future__ import annotations

import datetime as dt
import json

import streamlit as st

from core.flows.memory import browse
from core.flows.memory.edits import EDITABLE_COLUMNS, InvalidEdit, apply_edits
from core.flows.memory.versions import EditError, hard_delete, restore, revert_unit, soft_delete, versions_of
from pages.ui import memory_actions as actions

TABLES = {
    "エピソード": "EPISODE",
    "事実": "FACT",
    "約束（ループ）": "LOOP",
    "サマリー": "SUMMARY",
    "エンティティ": "ENTITIES",
    "関係（エッジ）": "EDGES",
}
KIND_JA = {"EPISODE": "エピソード", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}
LABELS = ["joy", "sadness", "anger", "fear", "neutral"]
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
}


def _select_unit(unit_id: int) -> None:
    st.session_state["memory_unit_id"] = unit_id


def _filters(kind: str) -> browse.Filters:
    with st.container(border=True):
        c = st.columns(4)
        state_label = c[0].selectbox("状態", ["すべて", "有効", "削除済み"], key="memory_f_state")
        dates = c[1].date_input(
            "期間", value=(), key="memory_f_dates", help="開始日と終了日を選びます（空欄なら全期間）"
        )
        entity_map = browse.entity_options(actions.engine())
        entity_id = c[2].selectbox(
            "エンティティ",
            [None, *entity_map],
            key="memory_f_entity",
            format_func=lambda i: "（すべて）" if i is None else entity_map[i],
        )
        tag = c[3].text_input("タグを含む", key="memory_f_tag")
        c2 = st.columns(4)
        emotions = c2[0].multiselect(
            "感情ラベル", LABELS, key="memory_f_emotion", disabled=kind != "EPISODE", placeholder="すべて"
        )
        sensitivity = c2[1].selectbox(
            "機微度（以下）",
            [2, 1, 0],
            key="memory_f_sens",
            format_func=lambda s: {2: "2: すべて", 1: "1: 私的まで", 0: "0: 通常のみ"}[s],
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
    frame, total = browse.units_frame(actions.engine(), kind, filters)
    pages = max(1, -(-total // filters.page_size))
    st.caption(
        f"{total} 件中 {len(frame)} 件を表示（{filters.page}/{pages} ページ）。"
        "セルを編集して「変更を保存」を押すと、版（バージョン）として記録されます。"
    )
    editable = set(EDITABLE_COLUMNS[kind])
    config = {
        col: st.column_config.Column(COLUMN_LABELS.get(col, col), disabled=col not in editable)
        for col in frame.columns
    }
    config["state"] = st.column_config.SelectboxColumn("状態", options=["active", "deleted"])
    config["sensitivity"] = st.column_config.NumberColumn("機微度", min_value=0, max_value=2, step=1)
    config["pin"] = st.column_config.CheckboxColumn("固定")
    for col in ("confidence", "salience", "persona_affect_intensity"):
        if col in frame:
            config[col] = st.column_config.NumberColumn(
                COLUMN_LABELS[col], min_value=0.0, max_value=1.0, step=0.05
            )
    if "persona_affect_label" in frame:
        config["persona_affect_label"] = st.column_config.SelectboxColumn("感情", options=LABELS)
    edited = st.data_editor(
        frame,
        column_config=config,
        hide_index=True,
        width="stretch",
        num_rows="fixed",
        key=f"memory_editor_{kind}",
    )
    c = st.columns([1, 2])
    if c[0].button("変更を保存", key=f"memory_save_{kind}", icon=":material/save:", type="primary"):
        try:
            saved = apply_edits(actions.engine(), actions.collection(), kind, frame, edited, actions.now())
        except (InvalidEdit, EditError, ValueError) as exc:
            st.error(f"保存できませんでした: {exc}")
        else:
            st.session_state["memory_notice"] = (
                f"{len(saved)} 件の記憶を更新しました（版: "
                + "、".join(f"#{u}→v{v}" for u, v in saved.items())
                + "）。"
                if saved
                else "変更はありませんでした。"
            )
            st.rerun()
    if len(frame):
        c[1].selectbox(
            "詳細を見る記憶",
            frame["id"].tolist(),
            key="memory_pick",
            format_func=lambda i: f"#{i}",
            on_change=lambda: _select_unit(st.session_state["memory_pick"]),
        )


def _unit_detail() -> None:
    st.markdown("#### 記憶の詳細・版の履歴・出どころ")
    unit_id = st.number_input(
        "記憶ID",
        min_value=0,
        step=1,
        key="memory_unit_id",
        help="表の「詳細を見る記憶」で選ぶか、IDを直接入力します。",
    )
    if not unit_id:
        st.caption(
            "IDを選ぶと、版の履歴・削除・出どころ（根拠のエピソードと、そこから生まれた記憶）を表示します。"
        )
        return
    info = browse.unit_summary(actions.engine(), int(unit_id))
    if info is None:
        st.warning(f"記憶 #{unit_id} は見つかりません（完全削除された可能性があります）。")
        return
    state_ja = "有効" if info["state"] == "active" else "削除済み"
    st.markdown(
        f"**#{info['id']} {KIND_JA.get(info['kind'], info['kind'])}**（{info['occurred_at']}・{state_ja}）"
    )
    st.text(info["text"])
    prov = browse.provenance(actions.engine(), int(unit_id))
    cols = st.columns(2)
    with cols[0]:
        st.markdown("**出どころ（根拠のエピソード）**")
        for src in prov["sources"] or []:
            st.button(f"→ エピソード #{src}", key=f"memory_src_{src}", on_click=_select_unit, args=(src,))
        if not prov["sources"]:
            st.caption("なし")
    with cols[1]:
        st.markdown("**この記憶から生まれたもの**")
        for d in prov["derived"]:
            derived = browse.unit_summary(actions.engine(), d)
            kind_ja = KIND_JA.get(derived["kind"], "") if derived else ""
            st.button(f"→ {kind_ja} #{d}", key=f"memory_der_{d}", on_click=_select_unit, args=(d,))
        if not prov["derived"]:
            st.caption("なし")
    if info["kind"] == "EPISODE":
        _episode_trace(int(unit_id))
    versions = versions_of(actions.engine(), int(unit_id))
    st.dataframe(
        [
            {
                "版": v["version"],
                "日時": dt.datetime.fromtimestamp(v["changed_at"], browse.JST).strftime("%Y-%m-%d %H:%M"),
                "操作": v["change_kind"],
                "メモ": v["note"],
            }
            for v in versions
        ],
        hide_index=True,
        width="stretch",
    )
    c = st.columns(4)
    target = c[0].selectbox("戻す版", [v["version"] for v in versions], key="memory_revert_version")
    if c[1].button("この版に戻す", key="memory_revert", icon=":material/undo:"):
        version = revert_unit(
            actions.engine(), actions.collection(), int(unit_id), int(target), actions.now()
        )
        st.session_state["memory_notice"] = (
            f"#{unit_id} を v{target} の内容に戻しました（新しい版 v{version}）。"
        )
        st.rerun()
    if info["state"] == "active":
        if c[2].button("削除（元に戻せる）", key="memory_soft_delete", icon=":material/delete:"):
            soft_delete(actions.engine(), actions.collection(), int(unit_id), actions.now())
            st.rerun()
    elif c[2].button("削除を取り消す", key="memory_restore", icon=":material/restore:"):
        restore(actions.engine(), actions.collection(), int(unit_id), actions.now())
        st.rerun()
    confirm = c[3].checkbox("完全削除を確認", key="memory_confirm_hard")
    if c[3].button(
        "完全に削除", key="memory_hard_delete", disabled=not confirm, icon=":material/delete_forever:"
    ):
        hard_delete(actions.engine(), actions.collection(), int(unit_id))
        st.session_state["memory_notice"] = (
            f"#{unit_id} を完全に削除しました（検索索引・ベクトル・関連も削除）。"
        )
        st.rerun()


def _episode_trace(unit_id: int) -> None:
    trace = browse.latest_trace(actions.engine(), unit_id)
    if trace is None:
        return
    with st.expander(f"この会話の検索トレース（トレース #{trace['id']}）", icon=":material/manage_search:"):
        t = trace["trace"]
        st.text(f"Q1: {t['q1']}\nQ2: {t['q2']}")
        st.caption("注入: " + json.dumps(t["pack"], ensure_ascii=False))
        if t["candidates"]:
            st.dataframe(t["candidates"], hide_index=True, width="stretch")
        extraction = browse.extraction_of_episode(actions.engine(), unit_id)
        if extraction:
            st.markdown("**抽出結果**")
            st.json(extraction, expanded=False)


def render_browser() -> None:
    choice = st.segmented_control("表", list(TABLES), default="エピソード", key="memory_table")
    kind = TABLES.get(choice or "エピソード", "EPISODE")
    if kind == "ENTITIES":
        st.dataframe(browse.entities_frame(actions.engine()), hide_index=True, width="stretch")
    elif kind == "EDGES":
        st.dataframe(browse.edges_frame(actions.engine()), hide_index=True, width="stretch")
    else:
        _unit_table(kind)
    _unit_detail()
    st.markdown("#### 灯の感情の推移（週ごとの平均の強さ）")
    series = browse.affect_series(actions.engine())
    if series.empty:
        st.caption("まだエピソードがありません。")
    else:
        st.bar_chart(series, stack=False, x_label="週", y_label="平均の強さ")
