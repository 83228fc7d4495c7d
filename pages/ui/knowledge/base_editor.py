"""Knowledge page, knowledge base tab: the editor of one entry, with its versions (spec 01 §7.2).

The editor keeps the version it was opened at: what is typed survives someone else's save, and saving
against that version never overwrites theirs silently; a refused save shows both (knowledge_conflict.py).
"""

from __future__ import annotations

from typing import Any, cast

import pandas as pd
import streamlit as st

from core.clock import format_local
from core.flows import knowledge as kb
from core.flows import knowledge as kf
from core.flows.knowledge import KnowledgeStoreError
from core.text import CHANGED_NOTICE
from pages.ui.knowledge import conflict
from pages.ui.knowledge import resume as kr
from pages.ui.knowledge import session as ks
from pages.ui.shell import state
from pages.ui.shell.auth import recorded_as
from pages.ui.shell.render import plain_label

OPENED_KEY = "knowledge_base_opened"  # data key: entry id -> the entry as its editor was opened (version)


def _when(ts: float | None) -> str:
    """A stored time (UTC epoch) as Japan time."""
    return format_local(ts) if ts else ""


def _opened(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as the editor was opened: the form keeps showing (and saving against) that version, so a
    save by someone else meanwhile neither resets what is typed nor gets overwritten."""
    opened = st.session_state.setdefault(OPENED_KEY, {})
    return cast("dict[str, Any]", opened.setdefault(entry["id"], dict(entry)))


def _reopen(entry_id: int) -> None:
    st.session_state.setdefault(OPENED_KEY, {}).pop(entry_id, None)
    conflict.clear(f"knowledge_base_{entry_id}")


def _save(base: Any, entry_id: int, fields: dict[str, Any], note: str, version: int) -> int | None:
    """Save against `version` as the signed-in person; None when refused (the conflict is kept for the page
    to show)."""
    try:
        return kb.edit_entry(base, entry_id, fields, by=state.person(), note=note, expected_version=version)
    except kb.StaleEntryError as exc:
        conflict.remember(f"knowledge_base_{entry_id}", exc)
        return None


def _resolve_conflict(base: Any, entry_id: int, note: str) -> None:
    """The person's choice after a refused save: their edit over the newest version, or reopen it."""
    scope = f"knowledge_base_{entry_id}"
    choice = conflict.render(scope)
    pending = conflict.pending(scope)
    if choice is None or pending is None:
        return
    if choice == "overwrite":
        conflict.clear(scope)
        try:
            saved = _save(base, entry_id, pending["mine"], note, pending["current"]["version"])
        except KnowledgeStoreError:
            st.error("変更を保存できませんでした（データベースに書き込めません）。")
            return
        if saved is not None:
            st.session_state["knowledge_base_notice"] = f"第{saved}版として保存しました。"
            _reopen(entry_id)
    else:
        _reopen(entry_id)
    st.rerun()


def render_entry_editor(entry: dict[str, Any]) -> None:
    base = ks.stores().base
    opened = _opened(entry)
    notice = st.session_state.pop("knowledge_base_notice", None)
    if notice:
        st.success(notice)
    with st.container(border=True):
        st.markdown(
            f"**ID {entry['id']}・第{opened['version']}版を編集中**（作成: {plain_label(entry['created_by'])} {_when(entry['created_at'])}"
            f"／最新: 第{entry['version']}版 {plain_label(entry['updated_by'])} {_when(entry['updated_at'])}）"
        )
        if (
            entry["version"] != opened["version"]
            and conflict.pending(f"knowledge_base_{entry['id']}") is None
        ):
            st.info(
                f"開いた後に {plain_label(entry['updated_by'])} さんが第{entry['version']}版を保存しました。"
                "このまま保存すると、両方の内容を見比べてから選べます。",
                icon=":material/update:",
            )
            if st.button(
                f"第{entry['version']}版を開き直す（入力中の内容は破棄）",
                key=f"knowledge_base_reopen_{entry['id']}",
                icon=":material/refresh:",
            ):
                _reopen(entry["id"])
                st.rerun()
        suffix = f"{entry['id']}_{opened['version']}"
        with st.form(f"knowledge_base_edit_{suffix}", border=False):
            edited = {}
            for key in kf.KNOWLEDGE_FIELDS:
                label = kf.KNOWLEDGE_FIELD_LABELS[key]
                widget_key = f"knowledge_base_{key}_{suffix}"
                edited[key] = (
                    st.text_area(label, opened[key], key=widget_key, height=100)
                    if key in ("review_points", "action_plan", "clause_sample")
                    else st.text_input(label, opened[key], key=widget_key)
                )
            st.caption(recorded_as("編集者", state.person()))
            note = st.text_input("変更メモ（任意）", key=f"knowledge_base_note_{entry['id']}")
            submitted = st.form_submit_button("変更を保存（新しい版）", icon=":material/save:")
        if submitted:
            edited, changed, problems = kb.check_entry(edited)
            for problem in problems:
                st.error(problem, icon=":material/error:")
            if problems:
                return
            try:
                version = _save(base, entry["id"], edited, note, opened["version"])
            except KnowledgeStoreError:
                st.error(
                    "変更を保存できませんでした（データベースに書き込めません）。入力内容はそのまま残っています。"
                )
                return
            if version is not None and version <= entry["version"]:
                st.info("変更はありませんでした（保存済みの内容と同じです）。")
            elif version is not None:
                st.session_state["knowledge_base_notice"] = f"第{version}版として保存しました。" + (
                    CHANGED_NOTICE if changed else ""
                )
                _reopen(entry["id"])
                st.rerun()
        _resolve_conflict(base, entry["id"], note)
        try:
            versions = kb.entry_history(base, entry["id"])
        except KnowledgeStoreError:
            st.error("版の履歴を読み込めませんでした（データベースに接続できません）。")
            return
        with st.expander(f"版の履歴（{len(versions)} 版）", icon=":material/history:"):
            history = pd.DataFrame(versions)[["version", "edited_at", "edited_by", "note", "knowledge_title"]]
            history["edited_at"] = history["edited_at"].map(_when)
            st.dataframe(
                history.rename(
                    columns={
                        "version": "版",
                        "edited_at": "日時",
                        "edited_by": "編集者",
                        "note": "メモ",
                        "knowledge_title": "ナレッジ名",
                    }
                ),
                hide_index=True,
            )
        if entry.get("source_interview_id") and st.button(
            "元の聞き取りを開く", key=f"knowledge_base_open_{entry['id']}", icon=":material/forum:"
        ):
            if kr.resume(entry["source_interview_id"]):
                st.toast("元の聞き取りを開きました。「聞き取り」タブで続きができます。")
            else:
                st.warning("元の聞き取りの記録が見つかりませんでした。")
                return
            st.rerun()
