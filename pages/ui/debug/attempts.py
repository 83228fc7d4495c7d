"""The attempts of one call, in order: the request as sent, the local fixes, the raw output and errors,
the repair prompt sent after a failed attempt (the next attempt is its reply), and the result."""

from __future__ import annotations

import json

import streamlit as st

from core.debuglog.events import DebugEvent
from core.flows.memory import FLOW as MEMORY_FLOW
from core.flows.memory import split_raw_reply
from core.workbench.tree import CallNode
from pages.ui.debug.names import latency
from pages.ui.shell import words
from pages.ui.shell.render import llm_label, raw_excerpt

DEBUG_CHARS = 200_000  # of one message or raw output on screen; the JSONL export has everything


def _status(event: DebugEvent) -> str:
    if event.ok:
        return "成功"
    return f"失敗（{words.result(event.error_type or 'error')}）"


def _messages(event: DebugEvent) -> None:
    with st.expander(f"送信したメッセージ（{len(event.messages)} 件）"):
        for i, message in enumerate(event.messages, 1):
            content = message.get("content", "")
            st.markdown(f"**{i}. {llm_label(message.get('role', '?'))}**（{len(content):,} 文字）")
            st.code(raw_excerpt(content, DEBUG_CHARS), language=None, wrap_lines=True)


def _attempt(event: DebugEvent, is_repair_reply: bool) -> None:
    kind = "修復の返答" if is_repair_reply else "最初の呼び出し"
    usage = event.usage or {}
    st.markdown(
        f"##### 試行 {event.attempt}（{kind}）: {llm_label(_status(event))}",
    )
    st.caption(
        f"{latency(event.latency_ms, event.provider)} ・ 入力 {int(usage.get('input_tokens', 0) or 0):,} / "
        f"出力 {int(usage.get('output_tokens', 0) or 0):,} トークン"
    )
    _messages(event)
    if event.fixes:
        st.markdown(
            "**ローカル修復**: "
            + llm_label(words.fixes(event.fixes), 2000)
            + "（下の生の出力に適用し、モデルを呼ばずに読み取りました）"
        )
    _output(event)
    if event.errors:
        st.markdown("**エラー**")
        for message in words.validator_errors(event.errors):
            st.markdown(f"- {llm_label(message, 2000)}")
        with st.expander("エラー（原文）"):
            st.code("\n".join(event.errors), language=None, wrap_lines=True)


def _output(event: DebugEvent) -> None:
    """What the model returned: a companion reply as the text the person saw and its persona trailer as JSON,
    the raw output itself under a label that says it is raw."""
    raw = event.raw or "（なし）"
    shown, trailer = split_raw_reply(raw) if event.flow == MEMORY_FLOW else (raw, None)
    if trailer is None:
        st.markdown("**返ってきた生の出力**")
        st.code(
            raw_excerpt(raw, DEBUG_CHARS), language="json" if event.schema_name else None, wrap_lines=True
        )
        return
    st.markdown("**返ってきた返答**（画面に表示した部分）")
    st.code(raw_excerpt(shown, DEBUG_CHARS), language=None, wrap_lines=True)
    st.markdown("**感情トレーラー**（返答の末尾に付く内部JSON。画面には表示しません）")
    try:
        st.json(json.loads(trailer), expanded=False)
    except ValueError:
        st.code(raw_excerpt(trailer, DEBUG_CHARS), language=None, wrap_lines=True)
    with st.expander("生の出力（原文。トレーラーの区切り記号を含む）"):
        st.code(raw_excerpt(raw, DEBUG_CHARS), language=None, wrap_lines=True)


def _repair(repair: DebugEvent) -> None:
    prompt = repair.messages[-1]["content"] if repair.messages else ""
    with st.expander(f"修復プロンプト（試行 {repair.attempt} の後に送信）"):
        st.code(raw_excerpt(prompt, DEBUG_CHARS), language=None, wrap_lines=True)


def render(node: CallNode, key: str) -> None:
    """Every attempt of `node` with the repair prompt that followed it, then the validated result."""
    st.markdown(f"**試行の経過（{len(node.attempts)} 回）**")
    repairs = {r.attempt: r for r in node.repairs}
    for index, attempt in enumerate(node.attempts):
        with st.container(border=True):
            _attempt(attempt, index > 0)
            repair = repairs.get(attempt.attempt)
            if repair is not None:
                _repair(repair)
    result = node.result
    if result is not None and result.parsed is not None:
        with st.expander("検証を通ったデータ（結果）"):
            st.json(result.parsed)
    elif result is not None and not result.ok:
        st.error(
            f"この呼び出しは失敗しました（{llm_label(result.error_type or 'error')}）。"
            "上の試行の生の出力とエラーを確認してください。",
            icon=":material/error:",
        )
