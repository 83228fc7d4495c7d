"""One chat-item shape for every flow's conversation (`st.session_state.chat[flow]`, spec 00 "chat").

An item is a plain dict (spec 00: `{role, content, ...}`), typed here so all four flows and pages agree:

- `role`: "user" or "assistant".
- `status`: "pending" (a user message whose reply has not arrived), "done", "error" (the reply failed;
  the user message it answered is marked "error" too, so neither enters the history), or "truncated"
  (the reply was cut off by the token limit or a broken stream; shown, kept, marked).
- `error_type`: the guard's error type when status is "error" (parse_error, provider_error, ...).
- `message`: the Japanese sentence shown for a failure.
- `raw`: the model's raw output (shown under 詳細 on failures; the full text for the debug view).
- `turn`: the turn number this item belongs to (1-based, user and assistant of one rally share it).
- `meta`: what only one flow needs (the knowledge turn JSON, review context info, memory details,
  diagnosis choices); never read by shared code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

ChatRole = Literal["user", "assistant"]
ChatStatus = Literal["pending", "done", "error", "truncated"]
STATUSES: tuple[ChatStatus, ...] = ("pending", "done", "error", "truncated")


class ChatItem(TypedDict):
    role: ChatRole
    content: str
    status: ChatStatus
    error_type: NotRequired[str | None]
    message: NotRequired[str]
    raw: NotRequired[str]
    turn: NotRequired[int | None]
    meta: NotRequired[dict[str, Any]]


def user_item(
    content: str, *, turn: int | None = None, status: ChatStatus = "pending", **meta: Any
) -> ChatItem:
    """A user message; "pending" until its reply is done or has failed."""
    item: ChatItem = {"role": "user", "content": content, "status": status, "turn": turn}
    if meta:
        item["meta"] = dict(meta)
    return item


def assistant_item(
    content: str, *, turn: int | None = None, status: ChatStatus = "done", raw: str = "", **meta: Any
) -> ChatItem:
    """A reply that arrived ("done" or "truncated")."""
    item: ChatItem = {"role": "assistant", "content": content, "status": status, "turn": turn}
    if raw:
        item["raw"] = raw
    if meta:
        item["meta"] = dict(meta)
    return item


def error_item(
    message: str, *, error_type: str | None, raw: str = "", turn: int | None = None, **meta: Any
) -> ChatItem:
    """A failed reply: the Japanese `message` is the content; the raw output and error type ride along."""
    item: ChatItem = {
        "role": "assistant",
        "content": message,
        "status": "error",
        "error_type": error_type,
        "message": message,
        "raw": raw,
        "turn": turn,
    }
    if meta:
        item["meta"] = dict(meta)
    return item


def meta(item: Mapping[str, Any]) -> dict[str, Any]:
    """The flow-specific extras of an item ({} when none)."""
    value = item.get("meta")
    return value if isinstance(value, dict) else {}


def is_history(item: Mapping[str, Any]) -> bool:
    """Whether an item is part of what the model sees as history (done or truncated rallies)."""
    return item.get("status") in ("done", "truncated")


def history(items: Iterable[ChatItem]) -> list[ChatItem]:
    """The completed rallies, in order."""
    return [i for i in items if is_history(i)]


def last_failed(items: list[ChatItem]) -> bool:
    """Whether the conversation ends in a failed reply or an unanswered message (offer 再試行)."""
    return bool(items) and (items[-1]["status"] == "error" or items[-1]["role"] == "user")


def pop_failed_turn(items: list[ChatItem]) -> ChatItem | None:
    """Remove a trailing failed reply and its user message; returns that user message (to send again)."""
    while items and items[-1]["role"] == "assistant" and items[-1]["status"] == "error":
        items.pop()
    if items and items[-1]["role"] == "user" and items[-1]["status"] in ("error", "pending"):
        return items.pop()
    return None
