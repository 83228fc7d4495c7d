"""The attempts of one call, in order: the request as sent, the local fixes, the raw output and errors,
the repair prompt sent after a failed attempt (the next attempt is its reply), and the result."""

from __future__ import annotations

import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.tree import CallNode
from pages.ui.shell.render import llm_label, raw_excerpt

DEBUG_CHARS = 200_000  # of one message or raw output on screen; the JSONL export has everything


def _status(event: DebugEvent) -> str:
    if event.ok:
        return "成功"
    return f"失敗（{event.error_type or 'error'}）"


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
        f"{event.latency_ms or 0:,.0f} ms ・ 入力 {int(usage.get('input_tokens', 0) or 0):,} / "
        f"出力 {int(usage.get('output_tokens', 0) or 0):,} トークン"
    )
    _messages(event)
    if event.fixes:
        st.markdown(
            "**ローカル修復**: "
            + llm_label("、".join(event.fixes), 2000)
            + "（下の生の出力に適用し、モデルを呼ばずに読み取りました）"
        )
    st.markdown("**返ってきた生の出力**")
    st.code(
        raw_excerpt(event.raw or "（なし）", DEBUG_CHARS),
        language="json" if event.schema_name else None,
        wrap_lines=True,
    )
    if event.errors:
        st.markdown("**エラー**")
        st.code("\n".join(event.errors), language=None, wrap_lines=True)


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
