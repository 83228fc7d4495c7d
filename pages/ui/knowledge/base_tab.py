"""Knowledge interview page: the knowledge base tab (table, filters, edit, exports) and the interviews tab."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.clock import format_local, utc_now
from core.flows import knowledge as ka
from core.flows import knowledge as kb
from core.flows import knowledge as kf
from core.flows import knowledge as kx
from core.flows.knowledge import KnowledgeStoreError
from core.flows.roster import people_names
from pages.ui.knowledge import archive
from pages.ui.knowledge import resume as kr
from pages.ui.knowledge import session as ks
from pages.ui.knowledge.base_editor import render_entry_editor
from pages.ui.shell import state

PICK_KEY = "knowledge_base_pick"  # selectbox widget key
TABLE_SEEN_KEY = "knowledge_base_table_seen"  # data key: the table row selection last acted on
PROGRESS_COLUMNS = ["interview_id", "turns", "to_draft", "to_finalize", "last_phase", "last_mode"]
TABLE_COLUMNS = {
    "id": "ID",
    "knowledge_title": "ナレッジ名",
    "contract_type": "契約類型",
    "target_clause": "対象条項",
    "version": "版",
    "updated_at": "更新日時",
    "updated_by": "更新者",
}


def _when(ts: float | None) -> str:
    """A stored time (UTC epoch) as Japan time."""
    return format_local(ts) if ts else ""


ORDER_LABELS = {
    "relevance": "標準（検索語に合う順・新しい順）",
    "newest": "更新が新しい順",
    "oldest": "更新が古い順",
}
NO_ENTRIES = (
    "保存されたナレッジはまだありません。聞き取りタブで草案を作り、「ナレッジベースに保存」を押してください。"
)
NO_MATCH = "条件に合うナレッジはありません。絞り込みを解除してください。"
NO_QUERY_MATCH = "「{query}」に一致するナレッジはありません。検索語を変えるか、絞り込みを解除してください。"
NO_ARCHIVED = "アーカイブしたナレッジはありません。"
NO_ARCHIVED_MATCH = "条件に合うアーカイブ済みのナレッジはありません。"
# Pixel widths that fit the main column at 1280 px wide: 対象条項 (「第8条（秘密保持）」) and 更新日時
# (「2026-11-25 15:00」) are never cut; a long ナレッジ名 is (it is shown whole in the editor below).
TABLE_CONFIG = {
    "ID": st.column_config.NumberColumn(width=50),
    "ナレッジ名": st.column_config.TextColumn(width=160),
    "契約類型": st.column_config.TextColumn(width=110),
    "対象条項": st.column_config.TextColumn(width=150),
    "版": st.column_config.NumberColumn(width=40),
    "更新日時": st.column_config.TextColumn(width=135),
    "更新者": st.column_config.TextColumn(width=115),
}


def empty_message(filters: dict[str, Any]) -> str:
    """Why the table is empty: nothing saved yet, or nothing matches what was searched / filtered."""
    searched = bool(str(filters["search"]).strip() or filters["contract_types"] or filters["clause"])
    if filters["archived"]:
        return NO_ARCHIVED_MATCH if searched else NO_ARCHIVED
    if not searched:
        return NO_ENTRIES
    query = " ".join(str(filters["search"]).split())[:40]
    return NO_QUERY_MATCH.format(query=query) if query else NO_MATCH


def _filters(base: Any) -> dict[str, Any] | None:
    """The search and filter widgets; None when the choices cannot be read."""
    try:
        types = kb.contract_type_choices(base)
    except KnowledgeStoreError:
        st.error("ナレッジベースを読み込めませんでした（データベースに接続できません）。")
        return None
    cols = st.columns([3, 2])
    search = cols[0].text_input(
        "キーワード検索", key="knowledge_base_search", placeholder="例: 秘密保持、損害賠償"
    )
    chosen = cols[1].multiselect(
        "契約類型で絞り込み", types, key="knowledge_base_types", placeholder="すべての契約類型"
    )
    try:
        clauses = kb.clause_choices(base, chosen)
    except KnowledgeStoreError:
        clauses = []
    cols = st.columns([4, 5, 3], vertical_alignment="bottom")
    clause = cols[0].selectbox(
        "対象条項で絞り込み",
        clauses,
        index=None,
        key="knowledge_base_clause",
        placeholder="すべての条項",
    )
    order = cols[1].selectbox(
        "並び順", list(ORDER_LABELS), format_func=ORDER_LABELS.__getitem__, key="knowledge_base_order"
    )
    archived = cols[2].toggle("アーカイブを表示", key="knowledge_base_show_archived")
    return {
        "search": search,
        "contract_types": chosen,
        "clause": clause or "",
        "order": order,
        "archived": archived,
    }


def render_knowledge_base() -> None:
    base = ks.stores().base
    archive.show_notice()
    filters = _filters(base)
    if filters is None:
        return
    try:
        entries = kb.find_entries(base, **filters)
    except KnowledgeStoreError:
        st.error("ナレッジベースを読み込めませんでした（データベースに接続できません）。")
        return
    if filters["archived"]:
        st.caption("アーカイブしたナレッジです（読み取り専用。「復元」で一覧と類似検索に戻ります）。")
    if not entries:
        st.info(empty_message(filters), icon=":material/inventory_2:")
        archive.render_reconcile()
        return
    frame = pd.DataFrame(entries)[list(TABLE_COLUMNS)]
    frame["updated_at"] = frame["updated_at"].map(_when)
    selection = st.dataframe(
        frame.rename(columns=TABLE_COLUMNS),
        column_config=TABLE_CONFIG,
        width="stretch",
        hide_index=True,
        key="knowledge_base_table",
        on_select="rerun",
        selection_mode="single-row",
    )
    if not filters["archived"]:
        render_exports(entries)
    rows = selection.selection.rows if selection is not None else []
    picked = _pick_entry(entries, entries[rows[0]]["id"] if rows else None)
    if picked is not None and filters["archived"]:
        archive.render_archived_entry(picked)
    elif picked is not None:
        render_entry_editor(picked)
        archive.render_archive_button(picked)
    archive.render_reconcile()


def _pick_entry(entries: list[dict[str, Any]], table_pick: int | None) -> dict[str, Any] | None:
    """The entry to view/edit: chosen in the selectbox (keyboard friendly) or by selecting a table row."""
    ss = st.session_state
    by_id = {e["id"]: e for e in entries}
    if table_pick != ss.get(TABLE_SEEN_KEY):  # a new row selection in the table moves the selectbox
        ss[TABLE_SEEN_KEY] = table_pick
        if table_pick is not None:
            ss[PICK_KEY] = table_pick
    if ss.get(PICK_KEY) not in by_id:  # filtered out or deleted
        ss[PICK_KEY] = None
    chosen = st.selectbox(
        "確認・編集するナレッジ",
        list(by_id),
        format_func=lambda i: (
            f"ID {i}：{' '.join(str(by_id[i]['knowledge_title']).split()) or '（無題）'}（第{by_id[i]['version']}版）"
        ),
        index=None,
        key=PICK_KEY,
        placeholder="表の行を選ぶか、ここから選んでください",
    )
    return by_id.get(chosen) if chosen is not None else None


# label, builder, file extension, MIME type, widget key suffix
Export = tuple[str, Callable[[Sequence[Mapping[str, Any]]], str | bytes], str, str, str]
EXPORTS: tuple[Export, ...] = (
    ("JSON", kx.entries_to_json, "json", "application/json", "json"),
    ("CSV", kx.entries_to_csv, "csv", "text/csv", "csv"),
    ("Markdown", kx.entries_to_markdown, "md", "text/markdown", "md"),
    (
        "Word（DOCX）",
        kx.entries_to_docx,
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "docx",
    ),
)


def _deferred(
    build: Callable[[Sequence[Mapping[str, Any]]], str | bytes], entries: list[dict[str, Any]]
) -> Callable[[], str | bytes]:
    return lambda: kx.export_entries(build, entries)


def render_exports(entries: list[dict[str, Any]]) -> None:
    """The four downloads of the shown entries, each built only when its button is pressed."""
    stamp = format_local(utc_now(), "%Y%m%d")
    st.caption(
        f"表示中の {len(entries)} 件をダウンロード（書き出せないナレッジがあれば、ファイルの最後に名前を記します）"
    )
    for col, (label, build, ext, mime, key) in zip(st.columns(len(EXPORTS)), EXPORTS, strict=True):
        col.download_button(
            label,
            _deferred(build, entries),  # built on click: a broken entry can no longer stop the tab
            f"knowledge_{stamp}.{ext}",
            mime,
            key=f"knowledge_export_{key}",
            icon=":material/download:",
            on_click="ignore",
        )


def render_interviews() -> None:
    """This person's interviews (resume, analytics); admins also see the team's drop-off."""
    try:
        overview = ka.interview_overview(ks.stores().interviews)
    except KnowledgeStoreError:
        st.error("聞き取りの記録を読み込めませんでした（データベースに接続できません）。")
        return
    if not overview.interviews:
        st.info("あなたが記録した聞き取りはまだありません。", icon=":material/forum:")
    else:
        _render_own_interviews(overview)
    archive.render_archived_interviews()
    render_team_analytics()


def _render_own_interviews(overview: ka.InterviewOverview) -> None:
    interviews, progress = overview.interviews, overview.progress
    titles = {i.id: f"{_when(i.updated_at)} {i.title or '（無題）'}" for i in interviews}
    st.markdown("**過去の聞き取りを再開**")
    labels = {
        i.id: f"{_when(i.updated_at)}　{i.title or '（無題）'}（{i.turns} ターン・"
        f"{kf.PHASE_LABELS.get(i.last_phase or '', '未応答')}）"
        for i in interviews
    }
    cols = st.columns([4, 1, 1], vertical_alignment="bottom")
    chosen = cols[0].selectbox(
        "聞き取り", list(labels), format_func=labels.__getitem__, key="knowledge_interview_pick"
    )
    if cols[1].button("再開", key="knowledge_interview_resume", icon=":material/play_arrow:") and chosen:
        if kr.resume(chosen):
            st.toast("聞き取りを再開しました。「聞き取り」タブに戻って続けてください。")
        st.rerun()
    if cols[2].button("アーカイブ", key="knowledge_interview_archive", icon=":material/archive:") and chosen:
        archive.archive_interview(chosen)
    st.markdown("**分析（あなたの聞き取り）**")
    frame = pd.DataFrame(progress, columns=PROGRESS_COLUMNS)  # columns even when no turn is stored yet
    reached = frame["to_draft"].dropna()
    finals = frame["to_finalize"].dropna()
    m = st.columns(3)
    m[0].metric("聞き取り数", len(frame))
    m[1].metric("草案までの平均ターン", f"{reached.mean():.1f}" if len(reached) else "—")
    m[2].metric("確定までの平均ターン", f"{finals.mean():.1f}" if len(finals) else "—")
    counts = overview.stop_counts
    chart = pd.DataFrame(
        {"フェーズ": [kf.PHASE_LABELS.get(p, p) for p in counts], "聞き取り数": list(counts.values())}
    )
    st.caption("各聞き取りが最後に止まっているフェーズ")
    phase_chart(chart)
    table = frame.assign(title=frame["interview_id"].map(lambda i: titles.get(i, i)))[
        ["title", "turns", "to_draft", "to_finalize", "last_phase"]
    ]
    table["last_phase"] = table["last_phase"].map(
        lambda p: kf.PHASE_LABELS.get(p, "未応答") if p else "未応答"
    )
    for column in ("to_draft", "to_finalize"):  # 「まだ」, never None / NaN, for an interview not there yet
        table[column] = table[column].map(lambda v: f"{int(v)}" if pd.notna(v) else "まだ")
    st.dataframe(
        table.rename(
            columns={
                "title": "聞き取り",
                "turns": "ターン数",
                "to_draft": "草案までのターン",
                "to_finalize": "確定までのターン",
                "last_phase": "最後のフェーズ",
            }
        ),
        column_config={"聞き取り": st.column_config.TextColumn(width="large")},
        width="stretch",
        hide_index=True,
    )


def phase_chart(chart: pd.DataFrame) -> None:
    """Interviews per phase as horizontal bars; the phase names are the axis labels, so the axis needs no
    title (a title there would stand sideways)."""
    st.bar_chart(
        chart,
        x="フェーズ",
        y="聞き取り数",
        sort=False,
        horizontal=True,
        height=200,
        x_label="",  # the phase axis (x even when drawn vertically): its names say it all
        y_label="聞き取り数",
    )


def render_team_analytics() -> None:
    """Admins (`[katachi] admins`): where everyone's interviews stopped, and per person how many reached a
    draft. Counts only: no titles and no text of another person's interview."""
    stores = ks.stores()
    try:
        team = ka.team_overview(stores.interviews, stores.person)
    except KnowledgeStoreError:
        st.error("チームの聞き取りの記録を読み込めませんでした（データベースに接続できません）。")
        return
    if team is None:
        return
    st.markdown("**チーム全体の分析（管理者）**")
    frame = pd.DataFrame(team.progress, columns=PROGRESS_COLUMNS)
    reached = frame["to_draft"].dropna()
    m = st.columns(3)
    m[0].metric("チームの聞き取り数", len(frame))
    m[1].metric("草案に到達", len(reached))
    m[2].metric("草案までの平均ターン", f"{reached.mean():.1f}" if len(reached) else "—")
    counts = team.stop_counts
    chart = pd.DataFrame(
        {"フェーズ": [kf.PHASE_LABELS.get(p, p) for p in counts], "聞き取り数": list(counts.values())}
    )
    st.caption("チームの各聞き取りが最後に止まっているフェーズ（離脱の位置）")
    phase_chart(chart)
    names = people_names(state.engine(), team.per_person)
    st.dataframe(
        pd.DataFrame(
            [
                {"利用者": names[owner], "聞き取り数": c.interviews, "草案に到達": c.drafts}
                for owner, c in team.per_person.items()
            ],
            columns=["利用者", "聞き取り数", "草案に到達"],
        ),
        hide_index=True,
        key="knowledge_team_table",
    )
