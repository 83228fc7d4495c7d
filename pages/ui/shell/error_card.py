"""The one error card of every page: one plain Japanese sentence and 「再試行」; the error
type, the translated parser / schema messages and the raw output folded under 「詳細」. Also the banner of a
reply cut short (「途中で途切れました」 with 「続きを生成」 and 「再試行」) and the notice of a background job
that failed (shown at the top of its page until a retry succeeds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

from core.flows.chat_item import meta
from core.guard.continuation import CONTINUE_LABEL, RETRY_LABEL, TRUNCATED_LABEL
from core.guard.error_texts import ERROR_TYPE_LABELS, plain_sentence, translate_errors

Action = Callable[[], None]


def _details(error_type: str | None, errors: Sequence[str], raw: str) -> None:
    with st.expander("詳細", icon=":material/info:"):
        if error_type:
            st.markdown(f"エラー種別: `{error_type}`（{ERROR_TYPE_LABELS.get(error_type, error_type)}）")
        messages = translate_errors(list(errors))
        if messages:
            st.markdown("**エラーの内容**")
            st.code("\n".join(messages), language=None, wrap_lines=True)
        st.markdown("**LLMの生出力**")
        st.code(raw or "（空）", language=None, wrap_lines=True)


def error_card(
    *,
    error_type: str | None,
    key: str,
    errors: Sequence[str] = (),
    raw: str = "",
    sentence: str | None = None,
    note: str = "",
    on_retry: Action | None = None,
    retry: bool = True,
) -> bool:
    """Draw the card; True when 「再試行」 was clicked (also when `on_retry` runs as its callback)."""
    st.error(sentence or plain_sentence(error_type), icon=":material/error:")
    if note:
        st.caption(note)
    clicked = False
    if retry:
        clicked = st.button(
            RETRY_LABEL, key=key, icon=":material/refresh:", type="primary", on_click=on_retry
        )
    _details(error_type, errors, raw)
    return clicked


def store_busy_card(message: str) -> None:
    """The page could not get a database connection in time (the replica's pool is exhausted): the Japanese
    sentence of StoreBusy (what happened, what to do) and 「再試行」, which runs the page again."""
    st.error(message, icon=":material/hourglass_top:")
    st.button(RETRY_LABEL, key="app_store_busy_retry", icon=":material/refresh:", type="primary")


def fallback_notice(text: str, *, error_type: str | None, errors: Sequence[str] = (), raw: str = "") -> None:
    """A call that failed while the flow went on with a fallback (the diagnosis interview): the sentence as
    a warning, the same 「詳細」 as the card."""
    st.warning(text, icon=":material/error:")
    _details(error_type, errors, raw)


def item_errors(item: Mapping[str, Any]) -> list[str]:
    """The error messages a failed ChatItem carries: meta["error"] lines, else its guard message."""
    detail = meta(item).get("error")
    if detail:
        return [line for line in str(detail).splitlines() if line.strip()]
    return [str(item.get("message") or "")] if item.get("message") else []


def item_error_card(
    item: Mapping[str, Any], *, key: str, is_last: bool = True, on_retry: Action | None = None, note: str = ""
) -> bool:
    """error_card for a failed reply (status "error"): its own Japanese message is the sentence;
    「再試行」 only on the conversation's last item."""
    return error_card(
        error_type=item.get("error_type"),
        sentence=str(item.get("message") or item.get("content") or "") or None,
        key=key,
        errors=item_errors(item),
        raw=str(item.get("raw") or ""),
        note=note or "入力内容は残っています。",
        on_retry=on_retry,
        retry=is_last,
    )


def truncated_banner(
    *, key: str, on_continue: Action | None = None, on_retry: Action | None = None, actions: bool = True
) -> str | None:
    """「途中で途切れました」 under a reply cut short; with `actions`, 「続きを生成」 and 「再試行」.
    Returns "continue" or "retry" when one was clicked."""
    st.warning(
        f"{TRUNCATED_LABEL}。出力の上限、または通信の途切れで、返答が最後まで届いていません。",
        icon=":material/content_cut:",
    )
    if not actions:
        return None
    left, right = st.columns(2)
    if left.button(CONTINUE_LABEL, key=f"{key}_continue", icon=":material/play_arrow:", on_click=on_continue):
        return "continue"
    if right.button(RETRY_LABEL, key=f"{key}_retry", icon=":material/refresh:", on_click=on_retry):
        return "retry"
    return None


def background_failure(
    message: str,
    *,
    key: str,
    on_retry: Action | None = None,
    label: str = RETRY_LABEL,
    disabled: bool = False,
    help: str | None = None,
) -> bool:
    """A background job that failed, at the top of its page until a retry succeeds; True when retried."""
    st.warning(message, icon=":material/sync_problem:")
    return st.button(
        label, key=key, icon=":material/refresh:", on_click=on_retry, disabled=disabled, help=help
    )
