"""Feedback on assistant replies: one 👍 / 👎 (and an optional comment) per reply.

A row is keyed by (owner_id, flow, conversation_id, turn): the person who rated, the flow
("knowledge" | "review" | "memory" | "diagnosis"), the flow's conversation as a string (interview id,
review thread id, memory conversation id, diagnosis session id) and the 1-based number of the reply in
that conversation (each page's numbering of its assistant items; core/flows/feedback.py says which).
`score` is 0 (👎) or 1 (👍), as st.feedback("thumbs") returns it. Rating again replaces the row (an
upsert: `created_at` stays, `updated_at` moves). Times are UTC epoch seconds (core.clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    delete,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite

from core.store.base import EpochSeconds, OwnedRepository
from core.store.db import metadata
from core.store.owners import owned_by, owner_column

SCORES = (0, 1)  # 0 = 👎, 1 = 👍 (st.feedback "thumbs")
MAX_ID_CHARS = 255  # a conversation id (interview uuid, thread number, session uuid)
MAX_FLOW_CHARS = 32

turn_feedback = Table(
    "turn_feedback",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    owner_column(index=False),  # the unique key leads with it
    Column("flow", String(MAX_FLOW_CHARS), nullable=False),
    Column("conversation_id", String(MAX_ID_CHARS), nullable=False),
    Column("turn", Integer, nullable=False),  # 1-based
    Column("score", SmallInteger, nullable=False),  # 0 👎 | 1 👍
    Column("comment", Text, nullable=False, default=""),
    Column("created_at", EpochSeconds, nullable=False),  # UTC epoch seconds
    Column("updated_at", EpochSeconds, nullable=False),
    UniqueConstraint("owner_id", "flow", "conversation_id", "turn", name="uq_turn_feedback_turn"),
)


@dataclass(frozen=True)
class Feedback:
    """One person's rating of one reply (`score` 0 = 👎, 1 = 👍; `comment` may be "")."""

    flow: str
    conversation_id: str
    turn: int
    score: int
    comment: str
    updated_at: int
    created_at: int = 0


def _feedback(row: Any) -> Feedback:
    m = row._mapping
    return Feedback(
        flow=m["flow"],
        conversation_id=m["conversation_id"],
        turn=int(m["turn"]),
        score=int(m["score"]),
        comment=m["comment"] or "",
        updated_at=int(m["updated_at"]),
        created_at=int(m["created_at"]),
    )


def _upsert(conn: Connection, values: dict[str, Any]) -> None:
    """Insert the row, or replace score / comment / updated_at of the person's existing one (atomic on
    both engines: two tabs rating the same reply at once leave one row)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(turn_feedback).values(**values)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["owner_id", "flow", "conversation_id", "turn"],
            set_={
                "score": statement.excluded.score,
                "comment": statement.excluded.comment,
                "updated_at": statement.excluded.updated_at,
            },
        )
    )


class FeedbackRepository(OwnedRepository):
    """One person's ratings of assistant replies: `FeedbackRepository(engine, clock, owner_id=...)`. Every
    read and write is this person's only; another person's rating of the same reply is a different row."""

    def _key(self, flow: str, conversation_id: str, turn: int | None = None) -> Any:
        condition = and_(
            owned_by(turn_feedback, self.owner_id),
            turn_feedback.c.flow == flow,
            turn_feedback.c.conversation_id == str(conversation_id),
        )
        return condition if turn is None else and_(condition, turn_feedback.c.turn == turn)

    def save(self, flow: str, conversation_id: str, turn: int, score: int, comment: str = "") -> Feedback:
        """Store (or replace) this person's rating of one reply; returns it as stored."""
        if score not in SCORES:
            raise ValueError(f"a rating is 0 (👎) or 1 (👍), not {score!r}")
        if turn < 1:
            raise ValueError(f"turns are numbered from 1, not {turn!r}")
        now = self.now()
        values = {
            "owner_id": self.owner_id,
            "flow": flow,
            "conversation_id": str(conversation_id),
            "turn": turn,
            "score": score,
            "comment": comment,
            "created_at": now,
            "updated_at": now,
        }
        with self.engine.begin() as conn:
            _upsert(conn, values)
            row = conn.execute(select(turn_feedback).where(self._key(flow, conversation_id, turn))).one()
        return _feedback(row)

    def clear(self, flow: str, conversation_id: str, turn: int) -> None:
        """Forget this person's rating of one reply (the thumb was unselected)."""
        with self.engine.begin() as conn:
            conn.execute(delete(turn_feedback).where(self._key(flow, conversation_id, turn)))

    def clear_after(self, flow: str, conversation_id: str, turn: int) -> None:
        """Forget this person's ratings of the replies after `turn` (they were replaced: a rewind)."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(turn_feedback).where(self._key(flow, conversation_id), turn_feedback.c.turn > turn)
            )

    def for_conversation(self, flow: str, conversation_id: str) -> dict[int, Feedback]:
        """This person's ratings in one conversation, by turn."""
        query = select(turn_feedback).where(self._key(flow, conversation_id)).order_by(turn_feedback.c.turn)
        with self.engine.connect() as conn:
            return {f.turn: f for f in map(_feedback, conn.execute(query))}

    def all(self, flow: str | None = None) -> list[Feedback]:
        """Every rating of this person (of one flow when given), by flow, conversation and turn."""
        query = select(turn_feedback).where(owned_by(turn_feedback, self.owner_id))
        if flow is not None:
            query = query.where(turn_feedback.c.flow == flow)
        order = (turn_feedback.c.flow, turn_feedback.c.conversation_id, turn_feedback.c.turn)
        with self.engine.connect() as conn:
            return [_feedback(r) for r in conn.execute(query.order_by(*order))]
