"""Re-run and compare one call of the debug log: a playground under the chosen call.

The system prompt and the last user message are editable; the request goes to the chosen targets at once
and the answers are shown side by side. Nothing in the saved conversation or the debug log changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.cost import cost_text
from core.workbench.rerun import RerunOutcome, Target, edit, rerun, rerun_request, targets
from pages.ui.debug import tab_memory
from pages.ui.shell import state
from pages.ui.shell.render import llm_label, plain_label, raw_excerpt

RESULTS_KEY = "debug_rerun_results"  # data key: (call_id, [(label, RerunOutcome)])
CALL_KEY = "debug_rerun_call"  # the call the text areas were filled from
SYSTEM_KEY, USER_KEY = "debug_rerun_system", "debug_rerun_user"
MODELS_KEY, TARGETS_KEY = "debug_rerun_models", "debug_rerun_targets"
RAW_CHARS = 50_000


def _refill(call_id: str, system: str, last_user: str) -> None:
    """A newly chosen call puts its own prompts into the text areas (edits of another call are dropped);
    the same call after a look at another tab gets back what was typed."""
    for key in (SYSTEM_KEY, USER_KEY, MODELS_KEY):
        tab_memory.restore(key)
    if st.session_state.get(CALL_KEY) != call_id:
        st.session_state[CALL_KEY] = call_id
        st.session_state[SYSTEM_KEY] = system
        st.session_state[USER_KEY] = last_user


def _outcome_column(label: str, outcome: RerunOutcome) -> None:
    st.markdown(f"**{plain_label(label)}**")
    if outcome.valid:
        st.success("有効（検証を通過）", icon=":material/check_circle:")
    else:
        st.error(f"無効: {llm_label(outcome.error or outcome.error_type or '-')}", icon=":material/error:")
    cost = plain_label(cost_text(outcome.cost))
    st.markdown(
        f"修復 **{outcome.repairs}** 回 ・ レイテンシ **{outcome.latency_ms:,.0f} ms**  \n"
        f"トークン 入力 **{outcome.input_tokens:,}** / 出力 **{outcome.output_tokens:,}** ・ コスト {cost}"
    )
    st.caption("生の出力")
    st.code(raw_excerpt(outcome.raw or "（なし）", RAW_CHARS), language=None, wrap_lines=True)


def _show_results(call_id: str) -> None:
    stored = st.session_state.get(RESULTS_KEY)
    if not stored or stored[0] != call_id:
        return
    results: list[tuple[str, RerunOutcome]] = stored[1]
    st.caption(f"再実行の結果（{len(results)} 件）。保存された会話とデバッグログは変わりません。")
    for column, (label, outcome) in zip(st.columns(len(results)), results, strict=True):
        with column:
            _outcome_column(label, outcome)


def render(event: DebugEvent, events: Sequence[DebugEvent]) -> None:
    """The re-run playground for `event`'s call (its first attempt's request), results side by side."""
    request = rerun_request(event, events)
    if not request.messages:
        st.caption("この呼び出しには送信したメッセージの記録がないため、再実行できません。")
        return
    _refill(request.call_id or str(id(event)), request.system, request.last_user)
    st.caption(
        "最初の試行で送ったリクエスト（修復前のメッセージ、スキーマ、温度、最大トークン）をそのまま送り直します。"
        "システムプロンプトと最後のユーザーメッセージは書き換えてから送れます。"
    )
    system = st.text_area("システムプロンプト", key=SYSTEM_KEY, height=160)
    last_user = st.text_area("最後のユーザーメッセージ", key=USER_KEY, height=100)
    typed = st.text_input(
        "ほかのモデル名（カンマ区切り。例: gpt-4.1, anthropic:claude-sonnet-4-5）",
        key=MODELS_KEY,
        help="設定済みのプロバイダーのモデルだけを追加できます。プロバイダー名がなければ現在のプロバイダーです。",
    )
    options = targets(state.settings(), typed)
    kept = tab_memory.restore(TARGETS_KEY, lambda chosen: all(t in options for t in chosen))
    chosen: list[Target] = st.multiselect(
        "再実行する相手",
        options,
        default=None if kept else [options[0]],
        format_func=lambda t: t.label,
        key=TARGETS_KEY,
    )
    tab_memory.remember(SYSTEM_KEY, USER_KEY, MODELS_KEY, TARGETS_KEY)
    if st.button("再実行", key="debug_rerun_go", icon=":material/replay:", disabled=not chosen):
        edited = edit(
            request,
            system=system if system != request.system else None,
            last_user=last_user if last_user != request.last_user else None,
        )
        with st.spinner(f"{len(chosen)} 件のモデルで再実行しています…"):
            outcomes = rerun(edited, [state.client_for(t) for t in chosen])
        st.session_state[RESULTS_KEY] = (
            st.session_state[CALL_KEY],
            [(t.label, o) for t, o in zip(chosen, outcomes, strict=True)],
        )
    _show_results(st.session_state[CALL_KEY])
