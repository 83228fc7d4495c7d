"""Thumbs up / down and an optional comment under a finished assistant reply, on all four chat pages.

`render(flow, conversation_id, turn)` draws the thumbs (st.feedback) and a 「コメント（任意）」 popover with
its own save button, in a fragment (a click reruns only this reply's widget). A thumb is saved as soon as it
is clicked; the comment with 「評価を保存」. What is stored pre-fills the widgets when they are first drawn in
a session, so the rating survives a reload. Storage is reached through core.flows.feedback only.

Widget keys: `feedback_<flow>_<conversation id>_<turn>_{thumb,comment,save,popover}` (stable per reply).
Data key (never bound to a widget): `feedback_notices` {reply key: (kind, text)}, shown once under the reply.
"""

from __future__ import annotations

import streamlit as st

from core.flows import feedback as fb
from pages.ui.shell import state

NOTICES_KEY = "feedback_notices"
SAVED = "評価を保存しました"
CLEARED = "評価を取り消しました"
PICK_FIRST = "先に高評価か低評価のボタンを選んでから保存してください（入力したコメントは残っています）。"
STORE_FAILED = (
    "評価を保存できませんでした（データベースに書き込めません）。少し待ってからもう一度お試しください。"
)
READ_FAILED = "保存済みの評価を読み込めませんでした。"
ROW_LABEL = "この返答の評価"
COMMENT_LABEL = "コメント（任意）"
COMMENT_FIELD = "この返答について気づいたこと"
COMMENT_MAX_CHARS = 2_000


def reply_key(flow: str, conversation_id: str, turn: int) -> str:
    """The key prefix of one reply's widgets (unique and stable per flow, conversation and turn)."""
    return f"feedback_{flow}_{conversation_id}_{turn}"


def _notify(key: str, kind: str, text: str) -> None:
    st.session_state.setdefault(NOTICES_KEY, {})[key] = (kind, text)


def _save(flow: str, conversation_id: str, turn: int, *, from_thumb: bool) -> None:
    """Callback of the thumbs (saved at once) and of 「評価を保存」 (the thumb and the comment)."""
    key = reply_key(flow, conversation_id, turn)
    score = st.session_state.get(f"{key}_thumb")
    comment = str(st.session_state.get(f"{key}_comment") or "")
    if score is None and not from_thumb:
        _notify(key, "warning", PICK_FIRST)
        return
    try:
        fb.save_feedback(state.feedback_repo(), flow, conversation_id, turn, score, comment)
    except fb.FeedbackStoreError:
        _notify(key, "error", STORE_FAILED)
        return
    _notify(key, "success", SAVED if score is not None else CLEARED)


def _stored(flow: str, conversation_id: str, turn: int) -> fb.Feedback | None:
    try:
        return fb.feedback_for(state.feedback_repo(), flow, conversation_id).get(turn)
    except fb.FeedbackStoreError:
        _notify(reply_key(flow, conversation_id, turn), "warning", READ_FAILED)
        return None


def _notice(key: str) -> None:
    found = st.session_state.get(NOTICES_KEY, {}).pop(key, None)
    if found is None:
        return
    kind, text = found
    if kind == "success":
        st.caption(f":material/check: {text}")
    elif kind == "error":
        st.error(text, icon=":material/error:")
    else:
        st.warning(text, icon=":material/warning:")


# What a comment on a reply of each flow typically says (the field's placeholder).
COMMENT_EXAMPLES = {
    "review": "例: 段落番号の読み違いがある",
    "memory": "例: 前に話した内容を取り違えている",
    "diagnosis": "例: 症状と関係のない質問をしている",
    "knowledge": "例: 条項の要約が契約書の文言と違う",
}


@st.fragment
def render(flow: str, conversation_id: str | None, turn: int) -> None:
    """The rating of one finished reply; nothing when the conversation has no id yet (not stored)."""
    if not conversation_id:
        return
    key = reply_key(flow, conversation_id, turn)
    stored = None
    if f"{key}_thumb" not in st.session_state or f"{key}_comment" not in st.session_state:
        stored = _stored(flow, conversation_id, turn)  # first drawn in this session: from the store
    args = (flow, conversation_id, turn)
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    with row:
        st.caption(ROW_LABEL, width="content")
        st.feedback(
            "thumbs",
            key=f"{key}_thumb",
            default=stored.score if stored else None,
            on_change=_save,
            args=args,
            kwargs={"from_thumb": True},
        )
        with st.popover(COMMENT_LABEL, icon=":material/edit_note:", key=f"{key}_popover"):
            st.text_input(
                COMMENT_FIELD,
                key=f"{key}_comment",
                value=stored.comment if stored else "",
                max_chars=COMMENT_MAX_CHARS,
                placeholder=COMMENT_EXAMPLES.get(flow, "例: 質問に答えていない"),
            )
            st.button(
                "評価を保存",
                key=f"{key}_save",
                icon=":material/save:",
                on_click=_save,
                args=args,
                kwargs={"from_thumb": False},
            )
    _notice(key)


def _drop_widget_state(flow: str, conversation_id: str, after: int) -> None:
    """Forget the widget state of this conversation's replies after turn `after` (they are gone)."""
    prefix = reply_key(flow, conversation_id, 0)[:-1]
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        turn, _, suffix = key[len(prefix) :].partition("_")
        if turn.isdigit() and int(turn) > after and suffix in ("thumb", "comment"):
            del st.session_state[key]


def forget(flow: str, conversation_id: str | None, turn: int | None) -> None:
    """A reply was discarded (再試行 of a reply cut short: the next reply takes its turn): drop its rating."""
    if not conversation_id or turn is None:
        return
    _drop_widget_state(flow, conversation_id, turn - 1)
    try:
        fb.save_feedback(state.feedback_repo(), flow, conversation_id, turn, None)
    except fb.FeedbackStoreError:
        _notify(reply_key(flow, conversation_id, turn), "error", STORE_FAILED)


def forget_after(flow: str, conversation_id: str | None, turn: int) -> None:
    """The replies after `turn` were replaced (a diagnosis rewind): drop their ratings."""
    if not conversation_id:
        return
    _drop_widget_state(flow, conversation_id, turn)
    try:
        fb.forget_after(state.feedback_repo(), flow, conversation_id, turn)
    except fb.FeedbackStoreError:
        _notify(reply_key(flow, conversation_id, turn), "error", STORE_FAILED)
