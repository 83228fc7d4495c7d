"""Memory page, 会話 tab: the persona chat with streamed replies and, per reply, what memory did.

The input is usable again as soon as the reply is shown: reflection, extraction and summaries run as one
background job (core/flows/memory/background.py); each reply's details fill in from the store when it lands.
The conversation is kept in the store and named in the URL (`?companion=<id>`): the message is stored before
the model is called, so a reload or a restart shows the conversation again, an interrupted message included.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from core.flows.chat_item import ChatItem, history, last_failed, pop_failed_turn, user_item
from core.flows.feedback import new_conversation_id, reply_turns
from core.flows.memory import (
    DEMO_TURNS,
    TurnDetails,
    describe_errors,
    discard_cut_memory_turn,
    finish_continuation,
    finish_turn,
    load_conversation,
    prepare_continuation,
    prepare_turn,
    refresh_items,
    reply_item,
    save_conversation,
    stream_continuation,
    stream_reply,
    turn_details_of,
    unexpected_error_item,
)
from pages.ui.memory import actions
from pages.ui.shell import background as bg
from pages.ui.shell import feedback, last_call, state
from pages.ui.shell.error_card import item_error_card, truncated_banner
from pages.ui.shell.render import (
    llm_alert,
    llm_bullets,
    llm_caption,
    llm_cell,
    llm_markdown,
    stream_llm_markdown,
)

SOURCE_JA = {
    "trailer": "返答末尾の内部JSON（トレーラー）",
    "reflection": "トレーラーが無効だったため、Reflection呼び出しで補完",
    "default": "トレーラーもReflectionも失敗したため既定値",
    "pending": "トレーラーが無効だったため、Reflection呼び出しで補完します（処理中）",
}
FLOW = "memory"
WORKING = "記憶を整理しています…"
# Data key: the id of this browser session's memory chat (kept in the store; ratings of its replies are
# stored under it too). The same id is in the URL, so a reload or a restart opens the same conversation.
CONVERSATION_KEY = "memory_conversation_id"
URL_KEY = "companion"  # st.query_params key of the conversation id
CONVERSATION_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
SAVE_FAILED = (
    "会話を保存できませんでした。再読み込みすると、この会話の最後のやり取りが表示されないことがあります。"
)


def open_conversation(items: list[ChatItem]) -> str:
    """This tab's conversation id: from session state, else from the URL (its stored items loaded into
    `items`: a reload or a restart), else a new one; the id is put in the URL."""
    ss = st.session_state
    if CONVERSATION_KEY not in ss:
        wanted = st.query_params.get(URL_KEY, "")
        if CONVERSATION_ID.fullmatch(wanted):
            ss[CONVERSATION_KEY] = wanted
            if not items:
                items[:] = load_conversation(actions.repo(), wanted)
        else:
            ss[CONVERSATION_KEY] = new_conversation_id()
    conversation_id: str = ss[CONVERSATION_KEY]
    if st.query_params.get(URL_KEY) != conversation_id:
        st.query_params[URL_KEY] = conversation_id
    return conversation_id


def store_conversation(items: list[ChatItem]) -> None:
    """Save the conversation as shown (only what changed is written); a failure is said, not raised."""
    try:
        save_conversation(actions.repo(), st.session_state[CONVERSATION_KEY], items)
    except Exception:  # noqa: BLE001 - the chat goes on; the person is told the store did not keep it
        st.session_state["memory_error"] = SAVE_FAILED


def _render_details(details: TurnDetails) -> None:
    with st.expander(f"このターンの記憶（エピソード #{details.episode_id}）", icon=":material/psychology:"):
        st.markdown("**注入した記憶**（LLMを使わない検索の結果）")
        if details.memories:
            st.dataframe(pd.DataFrame(details.memories).map(llm_cell), hide_index=True, width="stretch")
        else:
            st.caption("関連する記憶はありませんでした（最高スコアが0.35未満、または記憶なし）。")
        if details.facts:
            llm_bullets("事実", details.facts)
        if details.loops:
            llm_bullets("未完了の約束", details.loops)
        st.text(details.mood)
        st.markdown(f"**内部JSON**（{SOURCE_JA.get(details.reflection_source, '')}）")
        if details.trailer_errors and details.reflection_source != "trailer":
            llm_caption("トレーラーの問題: " + " / ".join(details.trailer_errors[:3]))
        elif details.trailer_errors:  # numbers out of range were clamped, not rejected
            llm_caption("値の調整: " + " / ".join(details.trailer_errors[:3]))
        st.json(details.trailer or details.reflection, expanded=False)
        st.markdown("**抽出結果**（人物・関係・事実・約束）")
        if details.pending and not details.extraction:
            if details.background == "deferred":  # the queue was full when the reply arrived
                st.caption(
                    "処理待ちが多いため、この会話の整理は後で行います（ページ上部の「再試行」でも実行できます）。"
                )
            else:
                st.caption(WORKING + "（抽出とサマリーは、終わりしだいここに表示されます）")
            return
        extraction = details.extraction or {}
        if extraction.get("errors"):
            llm_alert(
                "warning",
                "一部の抽出に失敗しました。エピソードは保存済みで、後で再試行できます: "
                + describe_errors(extraction["errors"]),
            )
        st.json(extraction, expanded=False)
        if details.summaries:
            llm_caption("サマリー: " + "、".join(details.summaries))


def _resend(items: list[ChatItem]) -> None:
    """再試行 of the last failed (or unanswered) message: drop the failed rally, send its input again."""
    user = pop_failed_turn(items)
    if user is not None:
        st.session_state["memory_pending_input"] = user["content"]


def _retry_cut(items: list[ChatItem]) -> None:
    """再試行 of a reply cut short: its episode is deleted for good and the input sent again."""
    cut_turn = items[-1].get("turn") if items else None
    question = discard_cut_memory_turn(actions.repo(), actions.collection(), items)
    if question is not None:
        # the reply asked again takes the cut reply's turn: the cut one's rating must not stick to it
        feedback.forget(FLOW, st.session_state.get(CONVERSATION_KEY), cut_turn)
        st.session_state["memory_pending_input"] = question


def _continue_cut() -> None:
    st.session_state["memory_continuing"] = True


def _render_history(items: list[ChatItem]) -> None:
    busy = bool(st.session_state.get("memory_continuing"))
    rated = reply_turns(FLOW, items)  # item index -> turn of each finished reply
    for index, item in enumerate(items):
        is_last = index == len(items) - 1
        with st.chat_message(item["role"]):
            if item["role"] == "assistant" and item["status"] == "error":
                item_error_card(
                    item, key="memory_retry_turn", is_last=is_last, on_retry=lambda: _resend(items)
                )
                continue
            if item["role"] == "assistant":
                llm_markdown(item["content"], key=f"memory_full_{index}")
                if item["status"] == "truncated":
                    truncated_banner(
                        key="memory_cut",
                        on_continue=_continue_cut,
                        on_retry=lambda: _retry_cut(items),
                        actions=is_last and not busy,
                    )
            else:
                llm_markdown(item["content"], key=f"memory_full_{index}")
                if is_last and last_failed(items):  # a turn that was interrupted before its reply
                    st.warning("この入力への返答がまだありません。入力した文は残っています。")
                    st.button(
                        "再試行",
                        key="memory_retry_turn",
                        icon=":material/replay:",
                        on_click=lambda: _resend(items),
                    )
            details = turn_details_of(item)
            if details is not None:
                _render_details(details)
            if index in rated:
                feedback.render(FLOW, st.session_state[CONVERSATION_KEY], rated[index])


def _run_continuation(items: list[ChatItem]) -> None:
    """Stream the continuation of the cut reply (core appends it and stores it), then rerun."""
    st.session_state["memory_continuing"] = False
    repo, collection, failure = actions.repo(), actions.collection(), None
    with last_call.capture(FLOW) as sink:
        try:
            cont = prepare_continuation(repo, collection, items)
            if cont is not None:
                with st.chat_message("assistant"):
                    reply = stream_continuation(state.client(), cont, sink)
                    stream_llm_markdown(reply)
                failed = finish_continuation(repo, collection, items, cont, reply)
                failure = failed.message if failed is not None else None
        except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
            failure = "予期しないエラーが発生しました。"
    if failure is not None:
        st.session_state["memory_error"] = f"続きを生成できませんでした。{failure}もう一度お試しください。"
    st.rerun()


def _run_turn(items: list[ChatItem], user_input: str) -> None:
    prior = history(items)
    turn = sum(1 for i in items if i["role"] == "user") + 1
    user = user_item(user_input, turn=turn)
    items.append(user)
    store_conversation(items)  # saved before the model is called: a restart mid-reply keeps the message
    with st.chat_message("user"):
        llm_markdown(user_input)
    repo, collection, client = actions.repo(), actions.collection(), state.client()
    job_sink, job_id = bg.job_sink(), None
    with last_call.capture(FLOW) as sink:
        try:
            prepared = prepare_turn(
                repo, collection, prior, user_input, conversation_id=st.session_state[CONVERSATION_KEY]
            )
            with st.chat_message("assistant"):
                reply = stream_reply(client, prepared, sink)
                stream_llm_markdown(reply)
            outcome = finish_turn(
                repo, collection, client, prepared, reply, sink, worker=state.jobs(), job_sink=job_sink
            )
        except Exception:  # noqa: BLE001 - the user sees a message, never a traceback; the input stays for 再送
            answer = unexpected_error_item(turn)
        else:
            answer, job_id = reply_item(prepared, outcome, turn), outcome.job_id
    bg.track(FLOW, actions.job_key(), job_id, job_sink)  # after capture: its calls join this turn's view
    user["status"] = "error" if answer["status"] == "error" else "done"
    items.append(answer)
    store_conversation(items)


def _say(text: str) -> None:
    st.session_state["memory_pending_input"] = text


def _render_suggestions(items: list[ChatItem]) -> None:
    """After the one-click demo's first turn, the demo turns not said yet, one click each."""
    said = {i.get("content") for i in items if i.get("role") == "user"}
    if DEMO_TURNS[0] not in said:
        return
    left = [t for t in DEMO_TURNS if t not in said][:2]
    if not left:
        return
    st.caption("デモの続き（押すと、その文を灯に話しかけます）")
    for index, text in enumerate(left):
        st.button(
            text, key=f"memory_suggest_{index}", icon=":material/chat_bubble:", on_click=_say, args=(text,)
        )


def render_chat() -> None:
    items: list[ChatItem] = st.session_state.chat["memory"]
    open_conversation(items)
    if not items:
        st.info(
            "灯に話しかけてみてください。人の名前（〜さん）、好きなもの・苦手なもの、約束や予定（〜する約束・〜するつもり）を話すと、"
            "記憶ブラウザに人物・事実・約束として残ります。",
            icon=":material/chat:",
        )
    bg.landed(FLOW)
    refresh_items(actions.repo(), items)  # what the background jobs stored since the last run
    store_conversation(items)  # a retry or a continuation changed it on the last run; details landed
    _render_history(items)
    if st.session_state.get("memory_continuing"):
        _run_continuation(items)
    bg.status(actions.job_key(), WORKING)
    _render_suggestions(items)
    pending = st.session_state.pop("memory_pending_input", None)
    typed = st.chat_input("灯に話しかける…", key="memory_input")
    user_input = typed or pending
    if user_input:
        _run_turn(items, user_input)
        st.rerun()
    last_call.render(FLOW)
