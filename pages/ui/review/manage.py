"""Managing the review and the thread on screen: 「答案・講評を登録」, edit / rename / delete one's own
review, rename / delete / export (Markdown, DOCX) a thread. Deleting asks first: a review's confirmation says
how many threads go with it. Storage only through core.flows.review_chat.

Widget keys: review_register, review_edit, review_rename_title, review_rename, review_delete,
review_delete_confirm, review_delete_cancel, review_manage (its expander); review_thread_title, review_thread_rename, review_export_md,
review_export_docx, review_thread_delete, review_thread_delete_confirm, review_thread_delete_cancel, review_thread_manage (its expander).
Data keys: review_confirm (("review" | "thread", id) while a deletion waits for its confirmation),
review_rename_for / review_thread_title_for (whose name the rename box was filled with).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.flows import review_chat
from pages.ui.review import material
from pages.ui.review import session as rs
from pages.ui.shell.render import plain_label

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _ask(what: tuple[str, int] | None) -> None:
    st.session_state["review_confirm"] = what


def on_rename_review(review_id: int) -> None:
    problem = review_chat.rename_review(rs.repo(), review_id, st.session_state.get("review_rename_title", ""))
    rs.notify(("error", problem) if problem else ("success", "レビューの名前を変更しました。"))


def on_delete_review(review_id: int) -> None:
    _ask(None)
    st.session_state["review_manage"] = False
    rs.notify(review_chat.delete_review(rs.repo(), review_id))
    rs.new_thread(rs.sample_id())


def register_button() -> None:
    st.button(
        "答案・講評を登録",
        key="review_register",
        icon=":material/edit_note:",
        on_click=material.on_open_new,
        help="自分の答案を貼り付け、講評を入力して登録します",
    )


def review_actions(review_id: int, title: str) -> None:
    """Edit, rename and delete the person's own review (nothing for the shared sample)."""
    if not review_chat.is_own_review(rs.repo(), review_id):
        return
    with st.expander(
        "このレビューを編集・名前変更・削除",
        icon=":material/settings:",
        key="review_manage",
        on_change="rerun",
    ):
        st.button(
            "答案・講評を編集",
            key="review_edit",
            icon=":material/edit:",
            on_click=material.on_open_edit,
            args=(review_id,),
        )
        if st.session_state.get("review_rename_for") != review_id:  # another review: its own name
            st.session_state["review_rename_for"] = review_id
            st.session_state["review_rename_title"] = title
        cols = st.columns([5, 2], vertical_alignment="bottom")
        cols[0].text_input("名前", key="review_rename_title", max_chars=review_chat.REVIEW_TITLE_CHARS)
        cols[1].button("名前を変更", key="review_rename", on_click=on_rename_review, args=(review_id,))
        _delete_with_confirmation(
            ("review", review_id),
            "このレビューを削除",
            lambda: review_chat.review_delete_warning(rs.repo(), review_id),  # counts its threads when asked
            "review_delete",
            on_delete_review,
            (review_id,),
        )


def _delete_with_confirmation(
    what: tuple[str, int],
    label: str,
    warning: Callable[[], str],
    key: str,
    on_delete: Callable[..., None],
    args: tuple[int, ...],
) -> None:
    """「label」, then (once asked) the warning with 削除する / やめる (keys `key`, `key`_confirm, `key`_cancel)."""
    if st.session_state.get("review_confirm") != what:
        st.button(label, key=key, icon=":material/delete:", on_click=_ask, args=(what,))
        return
    st.warning(warning())
    row = st.container(horizontal=True)
    row.button("削除する", key=f"{key}_confirm", type="primary", on_click=on_delete, args=args)
    row.button("やめる", key=f"{key}_cancel", on_click=_ask, args=(None,))


def on_rename_thread(thread_id: int) -> None:
    problem = review_chat.rename_thread(rs.repo(), thread_id, st.session_state.get("review_thread_title", ""))
    rs.notify(("error", problem) if problem else ("success", "スレッドの名前を変更しました。"))


def on_delete_thread(thread_id: int, review_id: int) -> None:
    _ask(None)
    st.session_state["review_thread_manage"] = False
    rs.notify(review_chat.delete_thread(rs.repo(), thread_id))
    rs.new_thread(review_id)


def thread_actions(thread_id: int | None, review_id: int) -> None:
    """Rename, export and delete the open thread (once it has been stored)."""
    export = review_chat.thread_export(rs.repo(), thread_id) if thread_id is not None else None
    if thread_id is None or export is None:
        return
    # Keyed: it stays open across the rerun of a rename (a notice above would otherwise make it a new one).
    with st.expander(
        "このスレッドの名前変更・書き出し・削除",
        icon=":material/forum:",
        key="review_thread_manage",
        on_change="rerun",
    ):
        if st.session_state.get("review_thread_title_for") != thread_id:  # another thread: its own name
            st.session_state["review_thread_title_for"] = thread_id
            st.session_state["review_thread_title"] = export.title
        cols = st.columns([5, 2], vertical_alignment="bottom")
        cols[0].text_input("スレッド名", key="review_thread_title", max_chars=review_chat.THREAD_TITLE_CHARS)
        cols[1].button("名前を変更", key="review_thread_rename", on_click=on_rename_thread, args=(thread_id,))
        st.caption(
            f"「{plain_label(export.title, 60)}」を書き出します: 問題文、会話で参照した段落、各ターンの質問と回答、要約。"
        )
        row = st.container(horizontal=True)
        row.download_button(
            "Markdown で書き出す",
            review_chat.export_markdown(export),
            file_name=review_chat.export_file_name(export, "md"),
            mime="text/markdown",
            key="review_export_md",
            icon=":material/download:",
            on_click="ignore",
        )
        row.download_button(
            "Word（DOCX）で書き出す",
            lambda: review_chat.export_docx(export),  # made when clicked, not on every rerun
            file_name=review_chat.export_file_name(export, "docx"),
            mime=DOCX_MIME,
            key="review_export_docx",
            icon=":material/download:",
            on_click="ignore",
        )
        _delete_with_confirmation(
            ("thread", thread_id),
            "このスレッドを削除",
            lambda: "このスレッドと、その会話をすべて削除します。元に戻せません。",
            "review_thread_delete",
            on_delete_thread,
            (thread_id, review_id),
        )
