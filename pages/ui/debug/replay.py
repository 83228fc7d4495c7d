"""Replay a conversation of the log through its flow: the check before switching models.

The source is this session's log or an uploaded JSONL export; every user turn of the chosen conversation
is sent again through the flow's real code on a temporary store, and the table shows what changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import streamlit as st

from core.debuglog.events import DebugEvent
from core.flows import review_chat
from core.flows.review_chat import FLOW as REVIEW_FLOW
from core.flows.review_chat import ReviewRecord
from core.settings import provider_label
from core.text.export import excel_csv
from core.workbench.replay import RecordedConversation, ReplayReport, conversations, replay
from core.workbench.replay_budget import confirm_threshold, expected_calls, replay_plan_text, too_many_turns
from core.workbench.replay_flows import REPLAYABLE
from core.workbench.rerun import Target, targets
from pages.ui.debug import tab_memory
from pages.ui.debug.names import conversation_title
from pages.ui.diagnosis import session as diagnosis_session
from pages.ui.shell import state, words
from pages.ui.shell.render import llm_cell, plain_label

RESULT_KEY = "debug_replay_report"  # data key: the last ReplayReport
RESULT_FOR = "debug_replay_report_for"  # data key: the label of the conversation it replayed
CONVERSATION_KEY, TARGET_KEY = (
    "debug_replay_conversation",
    "debug_replay_target",
)
STOPPED_KEY = "debug_replay_stopped"  # data key: 停止 was pressed


def _title(conversation: RecordedConversation) -> str:
    c = conversation
    return f"{conversation_title(c.flow, c.started_at, c.first_input, c.conversation_id)}（{len(c.turns)} ターン）"


def _csv(report: ReplayReport) -> bytes:
    """The table as CSV for Excel in Japan (its column names are Japanese already); the 入力 column comes
    from an uploaded file, so no cell may read as a formula."""
    rows = report.table()
    return excel_csv(rows, {name: name for name in (rows[0] if rows else ["ターン"])})


def _stop() -> None:
    st.session_state[STOPPED_KEY] = True


def _words(column: str, value: object) -> object:
    """A 「記録→再生」 cell of phase, mode or action ids in Japanese (the CSV keeps the ids)."""
    if not column.endswith("（記録→再生）") or not isinstance(value, str):
        return value
    return "→".join(words.any_word(part) for part in value.split("→"))


def _summary_words(summary: str) -> str:
    """The report's summary with the ids in it (phases, actions) in Japanese."""
    return re.sub(r"[a-z]+(?:_[a-z]+)+|[a-z]{4,}", lambda m: words.any_word(m.group()), summary)


def _show(report: ReplayReport) -> None:
    if report.stopped:
        st.warning(f"停止しました（{len(report.rows)} ターンまで）。", icon=":material/stop_circle:")
    st.markdown(f"**{plain_label(_summary_words(report.summary))}**")
    conversation = st.session_state.get(RESULT_FOR, "-")
    st.caption(
        f"会話: {plain_label(conversation)} ・ 再生したモデル: {plain_label(f'{provider_label(report.provider)} / {report.model}')}"
    )
    rows = [{k: llm_cell(_words(k, v)) for k, v in row.items()} for row in report.table()]
    st.dataframe(rows, hide_index=True, width="stretch", key="debug_replay_table")
    st.download_button(
        "表をCSVで保存",
        _csv(report),
        file_name="katachi-replay.csv",
        mime="text/csv",
        icon=":material/download:",
        key="debug_replay_csv",
    )


def _controls(events: Sequence[DebugEvent]) -> None:
    """Conversation, model and the 「リプレイ」 button (which stores its report in RESULT_KEY). The log is the
    page's: this session's, or the file read at the top of the page (one uploader for the whole page)."""
    found = [c for c in conversations(events) if c.flow in REPLAYABLE]
    if not found:
        st.info(
            "リプレイできる会話がありません（会話IDとターンごとの入力が記録された、ナレッジ・講評チャット・"
            "コンパニオン・問診の会話が対象です）。",
            icon=":material/info:",
        )
        return
    tab_memory.restore(CONVERSATION_KEY, lambda i: i in range(len(found)))
    index = st.selectbox(
        "会話",
        range(len(found)),
        format_func=lambda i: _title(found[i]),
        key=CONVERSATION_KEY,
    )
    options = [t for t in targets(state.settings()) if t.current or t.provider != state.settings().provider]
    tab_memory.restore(TARGET_KEY, lambda t: t in options)
    target: Target = st.selectbox(
        "リプレイするモデル", options, format_func=lambda t: t.label, key=TARGET_KEY
    )
    tab_memory.remember(CONVERSATION_KEY, TARGET_KEY)
    conversation = found[index]
    refused = too_many_turns(conversation.turns)
    if refused:
        st.error(refused, icon=":material/error:")
        return
    calls = expected_calls(conversation.turns)
    st.caption(f"リプレイすると {replay_plan_text(conversation.turns)} を行います。")
    confirmed = True
    if calls > confirm_threshold():
        confirmed = st.checkbox(
            f"モデル呼び出しが {confirm_threshold():,} 回を超えます（約{calls:,} 回）。費用と時間がかかることを確認しました",
            key="debug_replay_confirm",
        )
    if st.button("リプレイ", key="debug_replay_go", icon=":material/play_arrow:", disabled=not confirmed):
        st.button("停止", key="debug_replay_stop", icon=":material/stop:", on_click=_stop)
        st.session_state[STOPPED_KEY] = False
        report = ReplayReport(conversation.flow, target.provider, target.model)
        st.session_state[RESULT_KEY] = report  # the turns done stay when 停止 ends this run
        st.session_state[RESULT_FOR] = _title(conversation)
        with st.status(f"リプレイ中（{len(conversation.turns)} ターン）…", expanded=False) as status:
            bar = st.progress(0.0)

            def progress(i: int, n: int) -> None:
                report.stopped = True  # until the last turn is done: a run ended by 停止 shows as stopped
                bar.progress((i - 1) / n, text=f"ターン {i}/{n}")

            # diagnosis searches the manuals as its page does (the app's index; None: without them)
            rag = diagnosis_session.ensure_index() if conversation.flow == diagnosis_session.FLOW else None
            review = _thread_review(conversation.flow, conversation.conversation_id)
            client = state.client_for(target)
            replay(
                conversation.flow,
                conversation.turns,
                client,
                rag=rag,
                review=review,
                on_turn=progress,
                should_stop=lambda: bool(st.session_state.get(STOPPED_KEY)),
                report=report,
            )
            report.stopped = len(report.rows) < len(conversation.turns)
            bar.progress(1.0, text="完了")
            status.update(label=f"リプレイ完了: {report.summary}", state="complete")
        st.rerun()  # the 停止 button goes with the run


def _thread_review(flow: str, conversation_id: str) -> ReviewRecord | None:
    """A review-chat thread replays on its own review (the person's; the sample when it is not theirs)."""
    if flow != REVIEW_FLOW:
        return None
    return review_chat.review_of_thread(
        review_chat.repository(state.engine(), state.person()), conversation_id
    )


def render(events: Sequence[DebugEvent]) -> None:
    """Pick a source, a conversation and a model; 「リプレイ」 runs every user turn again and compares. The
    last report stays on screen (also after a look at another tab, or with no file chosen)."""
    st.caption(
        "会話のユーザー入力をすべて、選んだモデルで実際のフローのコードにもう一度通し、記録と比べます"
        "（一時的な保存先を使うため、保存済みの会話やデータは変わりません）。モデルやプロンプトを切り替える前の確認に使います。"
    )
    st.caption(
        "対象は、このページに表示中のログです（別のログをリプレイするには、ページ上部の"
        "「エクスポートしたログを読み込む（JSONL）」で読み込みます）。"
    )
    _controls(events)
    shown = st.session_state.get(RESULT_KEY)
    if isinstance(shown, ReplayReport):
        _show(shown)
