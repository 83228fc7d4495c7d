"""The one "what the model got this turn" expander, shared by every flow page.

A page runs its turn with `capture(flow)` as the sink; the captured calls are kept in
`st.session_state[f"{flow}_last_call"]` and `render(flow)` draws them (messages as sent, raw reply,
errors, local fixes) for every model call of the last turn, repairs and background calls included.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from core.debuglog import trace
from core.debuglog.events import CaptureSink
from pages.ui.shell import state, words
from pages.ui.shell.render import llm_caption, llm_label, plain_label, raw_excerpt

ROLES = {"system": "システム", "user": "ユーザー", "assistant": "アシスタント"}
STEP_LABELS = words.STEPS  # names of the LLM calls as staff read them (pages/ui/shell/words.py)


def key(flow: str) -> str:
    return f"{flow}_last_call"


@contextmanager
def capture(flow: str) -> Iterator[CaptureSink]:
    """A sink for one turn: forwards to the debug log (when DEBUG is on) and keeps the turn's calls.
    The turn's model calls carry this browser session's id (core.debuglog.trace); background jobs submitted in
    the block keep it."""
    sink = CaptureSink(state.sink(), secrets=state.settings().secrets)
    try:
        with trace.bind(session_id=state.browser_session_id()):
            yield sink
    finally:
        st.session_state[key(flow)] = sink.calls()


def clear(flow: str) -> None:
    st.session_state.pop(key(flow), None)


def _call(index: int, call: dict[str, Any]) -> None:
    label = STEP_LABELS.get(call["step"], call["step"] or "呼び出し")
    status = "成功" if call["ok"] else f"失敗（{words.result(call['error_type'])}）"
    schema = call["schema"] or "なし（テキスト）"
    attempt = "初回" if call["attempt"] <= 1 else f"修復 {call['attempt'] - 1} 回目"
    st.markdown(
        f"**{index}. {llm_label(label)}** ／ {attempt} ／ スキーマ: {llm_label(schema)} ／ {llm_label(status)}"
    )
    st.caption(f"送信メッセージ（{len(call['messages'])} 件）")
    for message in call["messages"]:
        role = ROLES.get(message["role"], message["role"])
        st.caption(f"{llm_label(role)}（{len(message['content']):,}字）")
        st.text(raw_excerpt(message["content"]))
    st.caption("返答（生の出力）")
    st.text(raw_excerpt(call["raw"] or "（空）"))
    if call["fixes"]:
        llm_caption("ローカル修復: " + words.fixes(call["fixes"]))
    if call["errors"]:
        st.caption("エラー: " + " / ".join(words.validator_errors(call["errors"])))
        st.text("\n".join(call["errors"]))  # as the validator wrote them


def debug_links(calls: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Query parameters of the debug page for each conversation (and turn) of the captured calls, in order."""
    out: list[dict[str, str]] = []
    for call in calls:
        params = {
            "flow": str(call.get("flow") or ""),
            "conversation": str(call.get("conversation_id") or ""),
            "turn": str(call.get("turn") or ""),
            "call": str(call.get("call_id") or ""),
        }
        if not any(p["flow"] == params["flow"] and p["conversation"] == params["conversation"] for p in out):
            out.append(params)
    return out


def _links(calls: list[dict[str, Any]]) -> None:
    if not st.session_state.get("app_debug"):
        st.caption(
            "記録がオフのため、このターンはデバッグログに記録されていません。サイドバーで"
            "「LLM呼び出しを記録する（デバッグ）」をオンにすると、次のターンからツリーで確認できます。"
        )
        return
    links = debug_links(calls)
    for params in links:
        label = "このターンをデバッグログで開く"
        if len(links) > 1:
            label += f"（{words.flow(params['flow'])}{'' if params['conversation'] else '・会話IDなし'}）"
        st.page_link(
            "pages/debug_log.py",
            label=plain_label(label),
            icon=":material/account_tree:",
            query_params={k: v for k, v in params.items() if v},
        )


def render(flow: str) -> None:
    """The expander for the last turn of `flow` (nothing called yet says so), with a link that opens the
    turn's conversation as a tree on the debug page."""
    calls: list[dict[str, Any]] = st.session_state.get(key(flow)) or []
    title = f"直近のターンでLLMに渡した内容と返答（{len(calls)}回の呼び出し）"
    with st.expander(title, icon=":material/data_object:"):
        if not calls:
            st.caption("直近のターンではLLMを呼び出していません。")
            return
        _links(calls)
        for index, call in enumerate(calls, 1):
            _call(index, call)
