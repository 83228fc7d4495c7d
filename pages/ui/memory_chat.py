"""Memory page, 会話 tab: the persona chat with streamed replies and, per reply, what memory did."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.flows.memory.chat import PreparedTurn, TurnOutcome, finish_turn, prepare_turn, stream_reply
from pages.ui import memory_actions as actions
from pages.ui import state
from pages.ui.render import llm_markdown, stream_llm_markdown

KIND_JA = {"EPISODE": "会話", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}


def _details(prepared: PreparedTurn, outcome: TurnOutcome) -> dict[str, Any]:
    r = prepared.retrieval
    return {
        "episode_id": outcome.episode_id,
        "trace_id": outcome.trace_id,
        "memories": [
            {
                "ID": c.unit_id,
                "種類": KIND_JA.get(c.kind, c.kind),
                "スコア": round(c.final, 3),
                "内容": r.texts.get(c.unit_id, c.body)[:120],
            }
            for c in r.selected
        ],
        "facts": [r.texts.get(f["unit_id"], "") for f in r.facts],
        "loops": [lp["loop_text"] for lp in r.loops],
        "mood": prepared.mood.describe(),
        "trailer": outcome.trailer,
        "trailer_errors": outcome.trailer_errors,
        "reflection": outcome.reflection,
        "reflection_source": outcome.reflection_source,
        "extraction": outcome.extraction.summary() if outcome.extraction else None,
        "summaries": [
            s.label() + ("を作成" if s.ok else f"の作成に失敗（{s.message}）") for s in outcome.summaries
        ],
    }


SOURCE_JA = {
    "trailer": "返答末尾の内部JSON（トレーラー）",
    "reflection": "トレーラーが無効だったため、Reflection呼び出しで補完",
    "default": "トレーラーもReflectionも失敗したため既定値",
}


def _render_details(details: dict[str, Any]) -> None:
    with st.expander(
        f"このターンの記憶（エピソード #{details['episode_id']}）", icon=":material/psychology:"
    ):
        st.markdown("**注入した記憶**（LLMを使わない検索の結果）")
        if details["memories"]:
            st.dataframe(pd.DataFrame(details["memories"]), hide_index=True, width="stretch")
        else:
            st.caption("関連する記憶はありませんでした（最高スコアが0.35未満、または記憶なし）。")
        if details["facts"]:
            st.markdown("**事実**\n" + "\n".join(f"- {f}" for f in details["facts"]))
        if details["loops"]:
            st.markdown("**未完了の約束**\n" + "\n".join(f"- {lp}" for lp in details["loops"]))
        st.text(details["mood"])
        st.markdown(f"**内部JSON**（{SOURCE_JA.get(details['reflection_source'], '')}）")
        if details["trailer_errors"] and details["reflection_source"] != "trailer":
            st.caption("トレーラーの問題: " + " / ".join(details["trailer_errors"][:3]))
        st.json(details["trailer"] or details["reflection"], expanded=False)
        st.markdown("**抽出結果**（人物・関係・事実・約束）")
        extraction = details["extraction"] or {}
        if extraction.get("errors"):
            st.warning(
                "一部の抽出に失敗しました。エピソードは保存済みで、後で再試行できます: "
                + " / ".join(f"{k}: {v}" for k, v in extraction["errors"].items())
            )
        st.json(extraction, expanded=False)
        if details["summaries"]:
            st.caption("サマリー: " + "、".join(details["summaries"]))


def _render_history(history: list[dict[str, Any]]) -> None:
    for index, msg in enumerate(history):
        with st.chat_message(msg["role"]):
            if msg.get("error"):
                st.error(msg["content"])
                if msg.get("raw"):
                    st.text("LLMの生の出力:\n" + msg["raw"][:2000])
                if index == len(history) - 1 and st.button(
                    "もう一度送る", key="memory_retry_turn", icon=":material/replay:"
                ):
                    failed = history.pop()  # the error
                    user = history.pop() if history and history[-1]["role"] == "user" else None
                    st.session_state["memory_pending_input"] = (
                        user["content"] if user else failed.get("input", "")
                    )
                    st.rerun()
                continue
            if msg["role"] == "assistant":
                llm_markdown(msg["content"])
            else:
                st.markdown(msg["content"])
            if msg.get("details"):
                _render_details(msg["details"])


def _run_turn(history: list[dict[str, Any]], user_input: str) -> None:
    prior = [m for m in history if not m.get("error")]
    history.append({"role": "user", "content": user_input})  # saved before the model is called
    with st.chat_message("user"):
        st.markdown(user_input)
    try:
        engine, collection, client = actions.engine(), actions.collection(), state.client()
        prepared = prepare_turn(engine, collection, prior, user_input, actions.now())
        with st.chat_message("assistant"):
            reply = stream_reply(client, prepared, state.sink())
            stream_llm_markdown(reply)
            with st.spinner("記憶を整理しています（抽出・サマリー）…"):
                outcome = finish_turn(engine, collection, client, prepared, reply, state.sink())
    except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
        history.append(
            {
                "role": "assistant",
                "error": True,
                "content": "返答または記憶の処理中に予期しないエラーが発生しました。"
                "入力した文は残っています。「もう一度送る」で再送できます。",
            }
        )
        return
    st.session_state["memory_last_call"] = {"messages": prepared.messages, "raw": outcome.raw}
    if not outcome.ok:
        history.append({"role": "assistant", "error": True, "content": outcome.error, "raw": outcome.raw})
        return
    history.append(
        {"role": "assistant", "content": outcome.reply_text, "details": _details(prepared, outcome)}
    )


def _render_last_call() -> None:
    last = st.session_state.get("memory_last_call")
    if not last:
        return
    with st.expander("LLMに渡した内容と返答（直近のターン）", icon=":material/code:"):
        for msg in last["messages"]:
            st.markdown(f"**{msg['role']}**")
            st.text(msg["content"])
        st.markdown("**返答（トレーラーを含む生の出力）**")
        st.text(last["raw"])


def render_chat() -> None:
    history: list[dict[str, Any]] = st.session_state.chat["memory"]
    if not history:
        st.info(
            "灯に話しかけてみてください。人の名前（〜さん）、好きなもの・苦手なもの、予定（明日・来週・次回）を話すと、"
            "記憶ブラウザに人物・事実・約束として残ります。",
            icon=":material/chat:",
        )
    _render_history(history)
    pending = st.session_state.pop("memory_pending_input", None)
    typed = st.chat_input("灯に話しかける…", key="memory_input")
    user_input = typed or pending
    if user_input:
        _run_turn(history, user_input)
        st.rerun()
    _render_last_call()
