"""Replies cut short are a state, not an answer.

A free-text reply stopped by the token limit (finish_reason "length") or by a stream that broke after some
text arrived is kept, marked 「途中で途切れました」 (ChatItem status "truncated"), stored as such, and can be
continued: the continuation call sends the same messages plus the partial reply as the assistant's and an
instruction to go on from where it stopped (prompts/continue_reply.md); its text is appended.
"""

from __future__ import annotations

from core.contracts.prompts import load_prompt
from core.guard.results import GuardResult
from core.llm.base import Message

TRUNCATED_LABEL = "途中で途切れました"
CONTINUE_LABEL = "続きを生成"
RETRY_LABEL = "再試行"
# The largest overlap trimmed when a continuation starts by repeating the end of the partial reply.
MAX_OVERLAP = 200


def cut_text(result: GuardResult[str] | None) -> str | None:
    """The text of a reply that was cut short, or None: an ok reply finished by the token limit, or a stream
    that broke (provider error) after some visible text arrived."""
    if result is None:
        return None
    if result.ok:
        last = result.attempts[-1] if result.attempts else None
        return result.text if last is not None and last.finish_reason == "length" else None
    if result.error_type == "provider_error" and result.raw.strip():
        return result.raw
    return None


def continuation_messages(messages: list[Message], partial: str) -> list[Message]:
    """The original stack, the partial reply as the assistant's, and the instruction to continue."""
    return [
        *messages,
        {"role": "assistant", "content": partial},
        {"role": "user", "content": load_prompt("continue_reply").strip()},
    ]


def join_continuation(partial: str, more: str) -> str:
    """partial + more, without the part of `more` that repeats the end of `partial`."""
    for size in range(min(MAX_OVERLAP, len(partial), len(more)), 4, -1):
        if partial.endswith(more[:size]):
            return partial + more[size:]
    return partial + more
