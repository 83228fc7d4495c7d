"""One guarded call on the debug page: the settings as sent, tokens and cost, notes, the attempt diff,
and every attempt (request, local fixes, raw output, repair prompt, result)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.diff import attempt_diff
from core.workbench.notes import call_notes
from core.workbench.prices import Cost, Price, cost
from core.workbench.tree import CallNode
from pages.ui.debug import attempts as debug_attempts
from pages.ui.debug import diff_view as debug_diff_view
from pages.ui.debug import rerun as debug_rerun
from pages.ui.debug.names import DEMO_LATENCY, DEMO_PROVIDER, latency
from pages.ui.shell import words
from pages.ui.shell.render import llm_label, plain_label


def step_label(step: str) -> str:
    """A call's step as staff read it (「返答」), or the step name itself when it has no Japanese name."""
    return words.step(step)


def status_text(ok: bool | None, error_type: str | None = None) -> str:
    if ok is None:
        return "結果なし"
    return "成功" if ok else f"失敗（{words.result(error_type or 'error')}）"


def _format(event: DebugEvent) -> str:
    """The structured-output form as sent: json_schema name + strict flag, json_object fallback, text."""
    parts = []
    if event.response_format:
        parts.append(event.response_format)
    if event.schema_name:
        parts.append(f"スキーマ名 {event.schema_name}")
    if event.strict is not None:
        parts.append(f"strict={'true' if event.strict else 'false'}")
    if event.response_format and "json_object" in event.response_format:
        parts.append("json_object へのフォールバック")
    return "、".join(parts) if parts else ("テキスト" if not event.schema_name else "記録なし")


def _ms(value: float | None) -> str:
    return f"{value:,.0f} ms" if value is not None else "-"


def settings_rows(event: DebugEvent) -> list[dict[str, str]]:
    """The request settings of an attempt as sent (what the wire carried, never credentials)."""
    rows = [
        ("プロバイダー / モデル", f"{words.provider(event.provider)} / {event.model or '-'}"),
        ("温度（temperature）", "-" if event.temperature is None else f"{event.temperature:g}"),
        ("最大出力トークン", "-" if event.max_tokens is None else f"{event.max_tokens:,}"),
        ("応答形式", _format(event)),
        ("リクエストID", event.request_id or "-"),
        ("接続先ホスト", event.base_host or "-"),
        ("SDK", event.sdk or "-"),
        ("最初のトークンまで", _ms(event.ttft_ms) if event.provider != DEMO_PROVIDER else DEMO_LATENCY),
        ("レイテンシ", latency(event.latency_ms, event.provider)),
    ]
    return [{"項目": k, "値": v} for k, v in rows]


def cost_line(label: str, c: Cost) -> None:
    """The cost of a sum on its own line (mixed currencies and unpriced models make it long)."""
    st.markdown(f"**{label}**: {plain_label(c.text(), 400)}")


def _tokens(node: CallNode, prices: Mapping[str, Price]) -> None:
    c = cost(node, prices)
    cols = st.columns(3)
    cols[0].metric("入力トークン", f"{c.tokens.input:,}")
    cols[1].metric("うちキャッシュ", f"{c.tokens.cached_input:,}")
    cols[2].metric("出力トークン", f"{c.tokens.output:,}")
    cost_line("この呼び出しの費用（全試行）", c)
    if any(a.usage_estimated for a in node.attempts):
        st.caption("サーバーが使用量を返さなかった試行は、ローカルで数えた推定値です。")


def _notes(node: CallNode) -> None:
    notes = call_notes(node)
    if not notes:
        return
    st.markdown(f"**メモ（{len(notes)} 件）**")
    for note in notes:
        where = f"試行 {note.attempt}" if note.attempt else "呼び出しの後"
        st.markdown(f"- 【{plain_label(note.kind)}】{llm_label(words.note(note.text), 1000)}（{where}）")


def rerun_slot(event: DebugEvent, events: Sequence[DebugEvent]) -> None:
    """Re-run this call on the current or other models and compare."""
    with st.expander("この呼び出しを再実行・比較（プレイグラウンド）", icon=":material/compare_arrows:"):
        debug_rerun.render(event, events)


def render(node: CallNode, events: Sequence[DebugEvent], prices: Mapping[str, Price], key: str) -> None:
    """The detail of one call (`key` keeps its widgets apart from other views of the same call)."""
    first = node.first
    st.markdown(
        f"#### {plain_label(step_label(node.step))} ／ {plain_label(words.flow(node.flow))} ／ "
        f"{plain_label(status_text(node.ok, node.result.error_type if node.result else None))}"
    )
    st.caption(
        f"call_id {plain_label(node.call_id)} ・ 試行 {len(node.attempts)} 回 ・ "
        f"合計 {latency(node.latency_ms, first.provider if first else None)} ・ "
        f"この下の呼び出し {len(node.children)} 件"
    )
    _tokens(node, prices)
    _notes(node)
    if first is not None:
        with st.container(border=True):
            st.markdown("**送信した設定**（最初の試行）")
            st.dataframe(settings_rows(first), hide_index=True, width="stretch", key=f"{key}_settings")
            if first.wire_schema is not None:
                with st.popover("送信したスキーマ（wire schema）"):
                    st.json(first.wire_schema)
    diff = attempt_diff(node)
    if diff is not None:
        debug_diff_view.render(diff, key)
    debug_attempts.render(node, key)
    if first is not None:
        rerun_slot(first, events)
