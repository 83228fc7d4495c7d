"""Knowledge interviews as a whole: reopen a stored one (a browser reload, the interview list) and the
one-click demo's inputs (spec 00: attachments are never stored, so a resumed input names its files).

an opened interview comes with the saved entries similar to its case (the 「類似ナレッジ」 the next
turn would send, looked up from the same case text without a model call) and whether it is archived (then the
page shows it read-only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from core.documents.attachments import extract_text_from_document
from core.flows.chat_item import ChatItem
from core.flows.knowledge import demo as kd
from core.flows.knowledge import interview as kf
from core.flows.knowledge.index import find_references
from core.flows.knowledge.items import failure_item, interview_user_item, turn_item
from core.flows.knowledge.stores import KnowledgeStoreError, KnowledgeStores, store_errors
from core.flows.knowledge.turn import TurnInput


class ResumedInterview(NamedTuple):
    """A stored interview rebuilt for the page: its conversation, current knowledge outputs, and the
    knowledge base entry already saved from it (so saving again adds a version)."""

    items: list[ChatItem]
    knowledge: list[dict[str, str]]
    saved_entry_id: int | None


def resumed_file_texts(attachments: Sequence[Mapping[str, Any]]) -> list[str]:
    """What stands for the attachments of a resumed input: their text is never stored, only their names."""
    names = "、".join(a.get("name") or "" for a in attachments)
    return [f"（添付ファイル: {names} — 本文は保存していないため省略）"] if attachments else []


def conversation_from_turns(rows: Sequence[Mapping[str, Any]]) -> tuple[list[ChatItem], list[dict[str, str]]]:
    """The ChatItems and knowledge outputs of stored turns (`KnowledgeRepository.interview_turns`).

    A retried input keeps only its last outcome; a resumed input carries a note naming its files, so a
    再試行 sends exactly what the history shows.
    """
    items: list[ChatItem] = []
    knowledge: list[dict[str, str]] = []
    last_by_turn = {r["turn_no"]: r for r in rows}
    for turn_no in sorted(last_by_turn):
        first = next(r for r in rows if r["turn_no"] == turn_no)
        last = last_by_turn[turn_no]
        user = interview_user_item(
            first["user_text"],
            resumed_file_texts(first["attachments"]),
            turn_no=turn_no,
            attachments=first["attachments"],
            resumed=True,
        )
        items.append(user)
        if last["ok"] and last["turn"]:
            user["status"] = "done"
            items.append(turn_item(last["turn"], turn_no=turn_no, raw=last["raw"] or ""))
            knowledge = kf.normalize_knowledge(last["turn"]["knowledge_json"])
        else:
            user["status"] = "error"
            items.append(
                failure_item(
                    error_type=last["error_type"],
                    raw=last["raw"] or "",
                    error=last["error"] or "",
                    turn_no=turn_no,
                )
            )
    return items, knowledge


def resume_interview(stores: KnowledgeStores, interview_id: str) -> ResumedInterview | None:
    """Rebuild a stored interview; None when it has no turns. Raises KnowledgeStoreError when the turns
    cannot be read (a failed lookup of the saved entry only leaves it unlinked)."""
    with store_errors():
        rows = stores.interviews.interview_turns(interview_id)
    if not rows:
        return None
    items, knowledge = conversation_from_turns(rows)
    try:
        with store_errors():
            saved = stores.base.entry_for_interview(interview_id)
    except KnowledgeStoreError:
        saved = None
    return ResumedInterview(items, knowledge, saved["id"] if saved else None)


class OpenedInterview(NamedTuple):
    """A stored interview as the page opens it: the rebuilt conversation, whether it is archived
    (`archived_at`, None when active), the saved entries similar to its case (none for an archived one: it
    gets no further turn) and notices (a failed similar-entry lookup)."""

    resumed: ResumedInterview
    archived_at: int | None
    references: list[dict[str, Any]]
    notices: list[str]


def open_interview(stores: KnowledgeStores, interview_id: str) -> OpenedInterview | None:
    """`resume_interview`, with the interview's archive state and, for an active one, the similar entries of its
    case text (`find_references` on the resumed conversation: what the next turn looks up). None when it has
    no turns or is not this person's; raises KnowledgeStoreError when it cannot be read."""
    resumed = resume_interview(stores, interview_id)
    if resumed is None:
        return None
    with store_errors():
        row = stores.interviews.get_interview(interview_id)
    if row is None:
        return None
    archived_at = row["archived_at"]
    notices: list[str] = []
    references = (
        [] if archived_at is not None else find_references(resumed.items, interview_id, stores.index, notices)
    )
    return OpenedInterview(resumed, archived_at, references, notices)


def demo_opening() -> TurnInput:
    """The one-click demo's first input: the scripted opening with the sample contract attached."""
    data = (kd.SAMPLE_DIR / kd.DEMO_SAMPLE).read_bytes()
    return TurnInput.from_documents(kd.DEMO_OPENING, [extract_text_from_document(kd.DEMO_SAMPLE, data)])


def next_demo_answer(items: Sequence[Mapping[str, Any]], step: int | None) -> str | None:
    """The demo script's next suggested answer: only after a reply arrived, while the script lasts."""
    if step is None or step >= len(kd.DEMO_SCRIPT) or not items:
        return None
    last = items[-1]
    if last.get("role") != "assistant" or last.get("status") == "error":
        return None
    return kd.DEMO_SCRIPT[step]
