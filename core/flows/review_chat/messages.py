"""The message array sent each turn (spec 02 LLMに渡るメッセージ配列の形)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.contracts.prompts import fill, load_prompt
from core.flows.review_chat.constants import HEADER_SUMMARY, PROMPT_SYSTEM, PROMPT_USER
from core.llm.base import Message


def system_prompt() -> str:
    """prompts/review_chat_system.txt (sent every turn)."""
    return load_prompt(PROMPT_SYSTEM).strip()


def user_question_message(question: str) -> Message:
    """The last message: `ユーザーの質問: {QUESTION}` from prompts/review_chat_user.txt."""
    return {"role": "user", "content": fill(load_prompt(PROMPT_USER).strip(), QUESTION=question)}


def plain_history(chat_history: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Only role and content of each user/assistant message (extra UI keys are dropped)."""
    return [
        {"role": str(m["role"]), "content": str(m["content"])}
        for m in chat_history
        if m.get("role") in ("user", "assistant")
    ]


def history_for_prompt(
    chat_history: Sequence[Mapping[str, Any]], conversation_summary: str, summary_up_to_turn: int
) -> list[Message]:
    """spec 02 会話履歴の渡し方: the raw history, or summary + the last summarized rally + every later message."""
    history = plain_history(chat_history)
    if not conversation_summary or summary_up_to_turn <= 0:
        return history
    summary = {"role": "user", "content": f"{HEADER_SUMMARY}\n{conversation_summary}"}
    last_rally_start = 2 * (summary_up_to_turn - 1)  # user_S, assistant_S of the last summarized turn S
    return [summary, *history[last_rally_start:]]


def build_review_chat_messages(
    context_text: str,
    chat_history: Sequence[Mapping[str, Any]],
    user_input: str,
    *,
    conversation_summary: str = "",
    summary_up_to_turn: int = 0,
    system: str | None = None,
) -> list[Message]:
    """spec 02 LLMに渡るメッセージ配列の形: system prompt, the context (one user message), the history
    (raw, or 【これまでの会話の要約】 + last summarized rally + later messages), then `ユーザーの質問: ...`.

    `chat_history` holds the completed rallies before this turn; the context is rebuilt every turn.
    """
    return [
        {"role": "system", "content": system if system is not None else system_prompt()},
        {"role": "user", "content": context_text},
        *history_for_prompt(chat_history, conversation_summary, summary_up_to_turn),
        user_question_message(user_input),
    ]
