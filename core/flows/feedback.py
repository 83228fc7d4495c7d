"""Feedback on assistant replies: what pages, the debug page and exports use.

Every finished reply (status "done" or "truncated") of the four flows can be rated 👍 (1) or 👎 (0) with an
optional comment; the rating is stored with the reply's key, so it survives a reload:

- flow: "knowledge" | "review" | "memory" | "diagnosis" (core.flows.registry names);
- conversation_id (a string): the knowledge interview id, the review thread id, the memory conversation id
  (`new_conversation_id`, kept in the session: the memory chat is one conversation per browser session),
  the diagnosis session id;
- turn (1-based), `reply_turns` numbers the replies as each page numbers its items: the item's own `turn`
  (the rally's number: knowledge turn_no, review turn, memory turn) for knowledge, review and memory; for
  diagnosis, whose turn numbers count diagnostic questions (several messages share one, greetings have
  none), the reply's position among the session's assistant messages (1 = the first one). A diagnosis
  rewind drops the later messages: `forget_after` drops their ratings too.

Pages never import core.store: they open the repository with `repository` and catch `FeedbackStoreError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from core.clock import Clock, utc_now
from core.flows.chat_item import is_history
from core.people import Person
from core.store.feedback import SCORES, Feedback, FeedbackRepository
from core.text.safe import COMMENT_MAX_CHARS, safe_text

__all__ = [
    "SCORES",
    "Feedback",
    "FeedbackRepository",
    "FeedbackStoreError",
    "feedback_for",
    "feedback_rows",
    "forget_after",
    "negative_keys",
    "new_conversation_id",
    "reply_turns",
    "repository",
    "save_feedback",
]

Numbering = Literal["turn", "position"]
NUMBERING: dict[str, Numbering] = {
    "knowledge": "turn",
    "review": "turn",
    "memory": "turn",
    "diagnosis": "position",
}
NEGATIVE, POSITIVE = 0, 1
RATING_LABELS = {NEGATIVE: "👎", POSITIVE: "👍"}


class FeedbackStoreError(RuntimeError):
    """The database could not read or write a rating (pages show a Japanese notice; nothing typed is lost)."""


@contextmanager
def _store_errors() -> Iterator[None]:
    try:
        yield
    except SQLAlchemyError as exc:
        raise FeedbackStoreError(str(exc)) from exc


def repository(engine: Engine, person: Person, clock: Clock = utc_now) -> FeedbackRepository:
    """The ratings repository of `person` on the app's engine."""
    return FeedbackRepository(engine, clock, owner_id=person.id)


def new_conversation_id() -> str:
    """A fresh id for a conversation that has none in its flow's store (the memory chat of a session)."""
    return uuid.uuid4().hex


def reply_turns(flow: str, items: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Which items of a flow's chat can be rated, and as which turn: {index in `items`: turn}.

    Only finished replies (assistant, "done" or "truncated") are rated; a failed or pending one is not.
    Numbering per flow: see the module docstring (`NUMBERING`).
    """
    numbering = NUMBERING.get(flow, "turn")
    turns: dict[int, int] = {}
    position = 0
    for index, item in enumerate(items):
        if item.get("role") != "assistant":
            continue
        position += 1
        if not is_history(item):
            continue
        turn = position if numbering == "position" else item.get("turn")
        if isinstance(turn, int) and turn >= 1:
            turns[index] = turn
    return turns


def save_feedback(
    repo: FeedbackRepository,
    flow: str,
    conversation_id: str,
    turn: int,
    score: int | None,
    comment: str = "",
) -> Feedback | None:
    """Store the person's rating of one reply; `score` None (the thumb unselected) forgets
    it and returns None. The comment is kept as typed, without surrounding blanks, made safe for storage and
    cut at COMMENT_MAX_CHARS (core.text.safe).

    Raises FeedbackStoreError when the database fails.
    """
    with _store_errors():
        if score is None:
            repo.clear(flow, conversation_id, turn)
            return None
        text = safe_text(comment.strip(), "コメント", COMMENT_MAX_CHARS, truncate=True).text
        return repo.save(flow, conversation_id, turn, score, text)


def feedback_for(repo: FeedbackRepository, flow: str, conversation_id: str) -> dict[int, Feedback]:
    """The person's ratings in one conversation, by turn. Raises FeedbackStoreError."""
    with _store_errors():
        return repo.for_conversation(flow, conversation_id)


def forget_after(repo: FeedbackRepository, flow: str, conversation_id: str, turn: int) -> None:
    """Drop the ratings of the replies after `turn` (a diagnosis rewind replaced them). Raises
    FeedbackStoreError."""
    with _store_errors():
        repo.clear_after(flow, conversation_id, turn)


def negative_keys(repo: FeedbackRepository) -> set[tuple[str, str, int]]:
    """(flow, conversation_id, turn) of every reply the person rated 👎: the debug page's filter 「低評価の
    呼び出し」 matches DebugEvent.flow / conversation_id / turn against it. Raises FeedbackStoreError."""
    with _store_errors():
        return {(f.flow, f.conversation_id, f.turn) for f in repo.all() if f.score == NEGATIVE}


def feedback_rows(repo: FeedbackRepository) -> list[dict[str, Any]]:
    """Every rating of the person as export rows (JSONL / CSV): flow, conversation_id, turn, score (0 / 1),
    rating (👎 / 👍), comment, created_at, updated_at (UTC epoch seconds); by flow, conversation, turn.
    Raises FeedbackStoreError."""
    with _store_errors():
        return [
            {
                "flow": f.flow,
                "conversation_id": f.conversation_id,
                "turn": f.turn,
                "score": f.score,
                "rating": RATING_LABELS[f.score],
                "comment": f.comment,
                "created_at": f.created_at,
                "updated_at": f.updated_at,
            }
            for f in repo.all()
        ]
