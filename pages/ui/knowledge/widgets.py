"""Knowledge interview page: rendering of the chat (ChatItems) and the side panel.

Only `assistant_message` is ever shown as the assistant's words (spec 01 §7.1); raw output is
shown as plain code, never as HTML. What the model got is the shared last-call expander.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import streamlit as st

from core.flows import knowledge as kb
from core.flows import knowledge as kf
from core.flows.chat_item import meta
from core.flows.feedback import reply_turns
from core.flows.knowledge import KnowledgeStoreError, seen_missing_items
from core.text import CHANGED_NOTICE
from pages.ui.knowledge import conflict, reuse
from pages.ui.knowledge import session as ks
from pages.ui.shell import feedback, state
from pages.ui.shell.auth import recorded_as
from pages.ui.shell.error_card import item_error_card
from pages.ui.shell.render import llm_alert, llm_caption, llm_label, llm_markdown

BadgeColor = Literal["blue", "orange", "green", "gray"]
MODE_COLORS: dict[str, BadgeColor] = {"interview": "blue", "clarify": "orange", "finalize": "green"}
LONG_FIELDS = ("review_points", "action_plan", "clause_sample")
CARD_SCOPE = "knowledge_card"  # the draft card's refused save (pages/ui/knowledge/conflict.py)
CARD_NOTICE_KEY = "knowledge_card_notice"  # data key: the last save's message, shown after a rerun


def attachment_caption(summary: dict[str, Any]) -> str:
    pages = f"{summary['pages']} ページ・" if summary.get("pages") else ""
    return f":material/attach_file: {summary['name']}（{pages}{summary['paragraphs']} 段落・{summary['chars']:,} 文字）"


def render_history() -> None:
    items = ks.chat()
    if not items:
        st.info(
            "事例の概要を入力するか、契約書（PDF・DOCX・TXT）を添付して送信してください。"
            "AIが4つのフェーズで聞き取り、ナレッジの草案を作ります。",
            icon=":material/forum:",
        )
    rated = reply_turns(ks.FLOW, items)  # item index -> turn of each finished reply
    interview_id = st.session_state[ks.INTERVIEW_KEY]
    read_only = ks.read_only()  # an archived interview: no 再試行 (nothing is added to it)
    for index, item in enumerate(items):
        if item["role"] == "user":
            render_user(item)
        elif item["status"] == "error":
            render_error(item, is_last=index == len(items) - 1 and not read_only)
        else:
            with st.chat_message("assistant"):
                llm_markdown(meta(item).get("assistant_message", ""))
                if index in rated:
                    feedback.render(ks.FLOW, interview_id, rated[index])
    if items and items[-1]["role"] == "user":  # the call for it never finished (the run was interrupted)
        with st.chat_message("assistant", avatar=":material/error:"):
            if read_only:
                st.warning("この入力への応答はありません。")
                return
            st.warning("この入力への応答がまだありません。入力内容は残っています。再試行してください。")
            _retry_button()


def render_user(item: Mapping[str, Any]) -> None:
    """A user message: the typed text, each attachment's name and counts, files that could not be read."""
    extras = meta(item)
    with st.chat_message("user"):
        if extras.get("text"):
            llm_markdown(extras["text"])
        for summary in extras.get("attachments", []):
            llm_caption(attachment_caption(summary))
            for warning in summary.get("warnings", []):
                st.caption(f":material/warning: {llm_label(warning, 500)}")
        if extras.get("resumed") and extras.get("attachments"):
            st.caption(
                ":material/info: 添付ファイルの本文は保存していないため、再開後はAIに送られません。"
                "必要なら添付し直してください。"
            )
        for error in extras.get("attachment_errors", []):
            llm_alert("warning", f"添付できなかったファイル: {error}")


def render_error(item: Mapping[str, Any], *, is_last: bool) -> None:
    """Spec 00: the shared error card (one sentence, 再試行; type, messages, raw under 詳細)."""
    with st.chat_message("assistant", avatar=":material/error:"):
        if item_error_card(item, key="knowledge_retry", is_last=is_last):
            with st.spinner("もう一度問い合わせています…"):
                ks.retry()
            st.rerun()


def _retry_button() -> None:
    if st.button("再試行", key="knowledge_retry", icon=":material/refresh:", type="primary"):
        with st.spinner("もう一度問い合わせています…"):
            ks.retry()
        st.rerun()


def render_stepper(phase: str | None) -> None:
    current = kf.PHASES.index(phase) if phase in kf.PHASES else -1
    lines = []
    for i, name in enumerate(kf.PHASES):
        label = f"{i + 1}. {kf.PHASE_LABELS[name]}"
        if i == current:
            lines.append(f":material/radio_button_checked: :blue-background[**{label}**]（現在）")
        elif i < current:
            lines.append(f":material/check_circle: {label}")
        else:
            lines.append(f":material/radio_button_unchecked: :gray[{label}]")
    st.markdown("  \n".join(lines))


def render_checklist(missing: list[str]) -> None:
    seen = seen_missing_items(ks.chat())
    if not seen:
        st.caption("まだ聞き取り項目はありません。")
        return
    lines = [
        (
            f":material/check_box_outline_blank: {llm_label(i)}"
            if i in missing
            else f":material/check_box: :gray[~~{llm_label(i)}~~]"
        )
        for i in seen
    ]
    st.markdown("  \n".join(lines))
    if not missing:
        st.caption("必要な情報はすべてそろっています。")


def render_side_panel() -> None:
    turn = ks.last_turn()
    with st.container(border=True):
        st.markdown("**進行状況**")
        render_stepper(turn["state"]["phase"] if turn else None)
        if turn:
            mode = turn["control"]["mode"]
            st.badge(f"モード: {kf.MODE_LABELS.get(mode, mode)}", color=MODE_COLORS.get(mode, "gray"))
    with st.container(border=True):
        st.markdown("**まだ聞き取りが必要な項目**")
        render_checklist(turn["state"]["missing_info"] if turn else [])
    reuse.render_similar()
    render_card()


def render_card() -> None:
    """The current draft (knowledge_outputs[0]) as an editable card with 「ナレッジベースに保存」."""
    outputs = st.session_state.knowledge_outputs
    with st.container(border=True):
        st.markdown("**ナレッジ草案**")
        if not outputs:
            st.caption("草案はまだありません。必要な情報がそろうと、ここに6項目の草案が表示されます。")
            return
        entry = outputs[0]
        version = st.session_state[ks.DRAFT_VERSION_KEY]
        read_only = ks.read_only()  # an archived interview: the draft is shown, not edited or saved
        edited = {}
        for key in kf.KNOWLEDGE_FIELDS:
            label = kf.KNOWLEDGE_FIELD_LABELS[key]
            widget_key = ks.card_key(key, version)
            if key in LONG_FIELDS:
                edited[key] = st.text_area(
                    label, value=entry[key], key=widget_key, height=110, disabled=read_only
                )
            else:
                edited[key] = st.text_input(label, value=entry[key], key=widget_key, disabled=read_only)
        if read_only:
            st.caption(
                "アーカイブ中の聞き取りの草案です（閲覧のみ）。保存するには聞き取りを復元してください。"
            )
            return
        st.caption(recorded_as("保存者", state.person()))
        saved = st.session_state[ks.SAVED_ENTRY_KEY]
        label = "ナレッジベースを更新（新しい版）" if saved else "ナレッジベースに保存"
        submitted = st.button(
            label, key=f"knowledge_card_save_{version}", icon=":material/save:", type="primary"
        )
        st.caption(
            "カードで直した内容は、次の送信でAIに「現在の草案」として伝わります（保存は保存ボタンで）。"
            "AIが草案を返さなかったターンでは、草案と編集はそのまま残ります。"
        )
        if submitted:
            if not edited["knowledge_title"].strip():
                st.error("ナレッジ名を入力してください。")
                return
            _save_or_ask(edited)
        notice = st.session_state.pop(CARD_NOTICE_KEY, None)
        if notice:
            st.success(notice, icon=":material/check:")
        _duplicate_question()
        _card_conflict()


def _save_or_ask(edited: dict[str, str]) -> None:
    """A new entry that nearly duplicates a saved one is asked about first; otherwise it is saved."""
    reuse.clear_duplicate()
    try:
        duplicates = ks.draft_duplicates(edited)
    except KnowledgeStoreError:
        duplicates = []  # the save below reports the database
    if duplicates:
        reuse.ask_duplicate(edited, duplicates)
    else:
        _save_card(edited)


def _duplicate_question() -> None:
    """「よく似たナレッジがあります」 and what the person chose: update that entry, save anew, or cancel."""
    pending = reuse.pending_duplicate()
    choice = reuse.render_duplicate_question()
    if pending is None or choice is None:
        return
    existing = reuse.chosen_duplicate()
    reuse.clear_duplicate()
    if choice == "new":
        _save_card(pending["draft"])
    elif choice == "update" and existing is not None:
        conflict.clear(CARD_SCOPE)
        try:
            entry_id, version = ks.update_duplicate(existing, pending["draft"])
        except kb.StaleEntryError as exc:
            conflict.remember(CARD_SCOPE, exc)
        except KnowledgeStoreError:
            st.error("ナレッジベースに保存できませんでした（データベースに書き込めません）。")
            return
        else:
            st.session_state[CARD_NOTICE_KEY] = (
                f"既存のナレッジ（ID {entry_id}）を更新しました（第{version}版）。「ナレッジベース」タブで確認できます。"
                if version > int(existing["version"])
                else f"既存のナレッジ（ID {entry_id}）と同じ内容でした。第{version}版のまま、この聞き取りに結び付けました。"
            )
    st.rerun()


def _save_card(edited: dict[str, str], over_version: int | None = None) -> bool:
    """Save the card; False when the database failed (the message is on screen)."""
    conflict.clear(CARD_SCOPE)
    edited, changed, problems = kb.check_entry(edited)
    if problems:
        for problem in problems:
            st.error(problem, icon=":material/error:")
        return False
    try:
        entry_id, entry_version = ks.save_draft(edited, over_version)
    except kb.StaleEntryError as exc:
        conflict.remember(CARD_SCOPE, exc)
        return True
    except KnowledgeStoreError:
        st.error("ナレッジベースに保存できませんでした（データベースに書き込めません）。")
        return False
    st.session_state[CARD_NOTICE_KEY] = (
        f"ナレッジベースに保存しました（ID {entry_id}・第{entry_version}版）。「ナレッジベース」タブで確認できます。"
    ) + (CHANGED_NOTICE if changed else "")
    return True


def _card_conflict() -> None:
    """The draft's entry was saved by someone else since this interview saved it: both, and the choice."""
    pending = conflict.pending(CARD_SCOPE)
    choice = conflict.render(CARD_SCOPE)
    if pending is None or choice is None:
        return
    if choice == "overwrite":
        if _save_card(pending["mine"], over_version=pending["current"]["version"]):
            st.rerun()
    else:
        conflict.clear(CARD_SCOPE)
        st.session_state[ks.SAVED_VERSION_KEY] = pending["current"]["version"]
        st.session_state.knowledge_outputs = [{k: pending["current"][k] for k in kf.KNOWLEDGE_FIELDS}]
        st.session_state[ks.DRAFT_VERSION_KEY] += 1
        st.rerun()
