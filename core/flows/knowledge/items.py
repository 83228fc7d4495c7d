"""The knowledge interview's ChatItems (core.flows.chat_item shapes) and what the page reads back from them (spec 00).

- user: `content` is the spec 00 payload sent to the model; `meta` holds `text` (typed), `attachments`
  (names and counts), `attachment_errors`, `file_texts` (attachment text, session only, never stored),
  `turn_no`, and `resumed` for items rebuilt from the store.
- assistant: `content` is the turn JSON text (what the history carries back to the model); `meta` holds
  `turn_json` (the turn) and `assistant_message` (the only thing shown, spec 01 §7.1).
- failure: `core.flows.chat_item.error_item` with the raw output and error type; `meta["error"]` is the error detail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.flows.chat_item import ChatItem, assistant_item, error_item, meta, user_item
from core.flows.knowledge import interview as kf
from core.guard.results import ERROR_MESSAGES

UNEXPECTED_ERROR = "unexpected_error"
UNEXPECTED_MESSAGE = "予期しないエラーが発生しました。"
FALLBACK_MESSAGE = "LLMの呼び出しに失敗しました。"


def interview_user_item(
    text: str,
    file_texts: Sequence[str],
    *,
    turn_no: int,
    attachments: Sequence[Mapping[str, Any]] = (),
    attachment_errors: Sequence[str] = (),
    resumed: bool = False,
    draft: Mapping[str, str] | None = None,
) -> ChatItem:
    """A user input of the interview, "pending" until its reply arrives (spec 00: added before the call);
    `draft` is the draft card as the person edited it, sent with the input."""
    extras: dict[str, Any] = {"resumed": True} if resumed else {}
    if draft:
        extras["draft"] = dict(draft)
    return user_item(
        kf.build_user_payload(text, file_texts, draft),
        turn=turn_no,
        text=text,
        attachments=[dict(a) for a in attachments],
        attachment_errors=list(attachment_errors),
        file_texts=list(file_texts),
        turn_no=turn_no,
        **extras,
    )


def turn_item(turn: Mapping[str, Any], *, turn_no: int, raw: str = "") -> ChatItem:
    """A successful reply: the turn JSON as history content, `assistant_message` for the screen."""
    turn = dict(turn)
    return assistant_item(
        json.dumps(turn, ensure_ascii=False),
        turn=turn_no,
        raw=raw,
        turn_json=turn,
        assistant_message=turn["assistant_message"],
    )


def reply_item(result: Mapping[str, Any], *, turn_no: int) -> ChatItem:
    """The ChatItem for a `call_llm` result: the assistant turn, or the failure with raw output and error type."""
    if result["ok"]:
        return turn_item(kf.turn_json(result), turn_no=turn_no, raw=result.get("raw") or "")
    return failure_item(
        error_type=result.get("error_type"),
        raw=result.get("raw") or "",
        error=result.get("error") or "",
        message=result.get("message") or "",
        turn_no=turn_no,
    )


def failure_item(
    *, error_type: str | None, raw: str, error: str, message: str = "", turn_no: int
) -> ChatItem:
    """A failed reply (spec 00: the raw output and error type are shown; the input stays)."""
    text = message or ERROR_MESSAGES.get(error_type or "", FALLBACK_MESSAGE)
    return error_item(text, error_type=error_type, raw=raw, turn=turn_no, error=error)


def item_text(item: Mapping[str, Any]) -> str:
    """What the person typed in a user item."""
    return str(meta(item).get("text", ""))


def item_turn_no(item: Mapping[str, Any]) -> int:
    return int(meta(item).get("turn_no") or item.get("turn") or 0)


def turn_of(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """The turn JSON of a successful assistant item (None for any other item)."""
    if item.get("role") != "assistant" or item.get("status") != "done":
        return None
    turn = meta(item).get("turn_json")
    return turn if isinstance(turn, dict) else None


def last_turn(items: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The turn JSON of the last successful assistant item (the side panel's phase, mode, missing items)."""
    return next((t for t in map(turn_of, reversed(list(items))) if t is not None), None)


def seen_missing_items(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every missing_info item asked for so far, in first-seen order (the checklist)."""
    seen: list[str] = []
    for item in items:
        turn = turn_of(item)
        for info in turn["state"]["missing_info"] if turn else []:
            if info not in seen:
                seen.append(info)
    return seen


def next_turn_no(items: Iterable[Mapping[str, Any]]) -> int:
    """The number of the next user input (user inputs counted, so a retried input keeps its number)."""
    return sum(1 for i in items if i.get("role") == "user") + 1


CASE_DRAFT_FIELDS = ("contract_type", "target_clause", "knowledge_title")


def case_text(items: Iterable[Mapping[str, Any]]) -> str:
    """What an interview is about, for the similar-entry lookup: every text the person typed (not
    attachments: a whole contract would outweigh the case), then the latest draft's contract type, clause
    and title when there is a draft."""
    listed = list(items)
    parts = [item_text(i) for i in listed if i.get("role") == "user" and item_text(i).strip()]
    draft = (last_turn(listed) or {}).get("knowledge_json") or {}
    parts += [str(draft.get(k) or "") for k in CASE_DRAFT_FIELDS if draft.get(k)]
    return "\n".join(parts)
