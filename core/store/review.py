"""Review chat tables and repository: reviews, threads (spec 02 DB（Thread）columns), messages.

Messages are user/assistant only; the per-turn context is never stored (spec 02 注意点).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
    select,
)
from sqlalchemy.exc import IntegrityError

from core.store.base import EpochSeconds, Repository, inserted_id
from core.store.db import metadata
from core.store.review_models import ChatMessage, ReviewRecord, ThreadRecord, ThreadState

THREAD_TITLE_CHARS = 40

review_reviews = Table(
    "review_reviews",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("title", String, nullable=False),
    Column("question_text", Text, nullable=False),
    Column("purpose_text", Text, nullable=False, default=""),
    Column("grading_impression_text", Text, nullable=False, default=""),
    Column("review_json", Text, nullable=False),
    Column("answer_text", Text, nullable=False),
    Column("sample_key", String, unique=True, nullable=True),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
)

review_threads = Table(
    "review_threads",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "review_id", Integer, ForeignKey("review_reviews.id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("title", String, nullable=False, default=""),
    Column("conversation_summary", Text, nullable=False, default=""),
    Column("summary_up_to_turn", Integer, nullable=False, default=0),
    Column("last_section_mention_turn", Integer, nullable=True),
    Column("last_section_paragraph_numbers", Text, nullable=True),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
)

review_messages = Table(
    "review_messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "thread_id", Integer, ForeignKey("review_threads.id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("turn", Integer, nullable=False),
    Column("role", String, nullable=False),
    Column("content", Text, nullable=False),
    Column("meta", Text, nullable=False, default="{}"),
    Column("created_at", EpochSeconds, nullable=False),
    CheckConstraint("role IN ('user', 'assistant')", name="review_messages_role"),
)


def _summary_values(state: ThreadState) -> dict[str, Any]:
    return {
        "conversation_summary": state.conversation_summary,
        "summary_up_to_turn": state.summary_up_to_turn,
    }


def _paragraph_values(state: ThreadState) -> dict[str, Any]:
    return {
        "last_section_mention_turn": state.last_section_mention_turn,
        "last_section_paragraph_numbers": state.last_section_paragraph_numbers,
    }


def _state_values(state: ThreadState) -> dict[str, Any]:
    return {**_summary_values(state), **_paragraph_values(state)}


class ReviewRepository(Repository):
    """The three review tables (SQLAlchemy Core, one transaction per call); times are UTC epoch seconds."""

    # reviews
    def add_review(self, record: ReviewRecord, *, sample_key: str | None = None) -> int:
        now = self.now()
        values = {**record.to_json_dict(), "review_json": json.dumps(record.review_json, ensure_ascii=False)}
        with self.engine.begin() as conn:
            result = conn.execute(
                review_reviews.insert().values(
                    **values, sample_key=sample_key, created_at=now, updated_at=now
                )
            )
            return inserted_id(result)

    def ensure_sample(self, record: ReviewRecord, sample_key: str) -> int:
        """The id of the bundled sample, inserting it once (also when several sessions or replicas ask at
        the same moment: the unique sample_key lets one insert win, the others read its id)."""
        query = select(review_reviews.c.id).where(review_reviews.c.sample_key == sample_key)
        with self.engine.connect() as conn:
            found = conn.execute(query).first()
        if found:
            return int(found[0])
        try:
            return self.add_review(record, sample_key=sample_key)
        except IntegrityError:
            with self.engine.connect() as conn:
                return int(conn.execute(query).scalar_one())

    def list_reviews(self) -> list[dict[str, Any]]:
        query = select(review_reviews.c.id, review_reviews.c.title, review_reviews.c.sample_key).order_by(
            review_reviews.c.id
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def get_review(self, review_id: int) -> ReviewRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(review_reviews).where(review_reviews.c.id == review_id)).first()
        if row is None:
            return None
        m = row._mapping
        return ReviewRecord(
            title=m["title"],
            question_text=m["question_text"],
            purpose_text=m["purpose_text"],
            grading_impression_text=m["grading_impression_text"],
            review_json=json.loads(m["review_json"]),
            answer_text=m["answer_text"],
            id=m["id"],
        )

    # threads
    def create_thread(self, review_id: int, title: str = "") -> int:
        now = self.now()
        with self.engine.begin() as conn:
            result = conn.execute(
                review_threads.insert().values(
                    review_id=review_id,
                    title=title,
                    **_state_values(ThreadState()),
                    created_at=now,
                    updated_at=now,
                )
            )
            return inserted_id(result)

    def list_threads(self, review_id: int) -> list[dict[str, Any]]:
        """Threads of a review, newest activity first, with their number of completed turns."""
        turns = (
            select(func.count())
            .where(review_messages.c.thread_id == review_threads.c.id, review_messages.c.role == "assistant")
            .scalar_subquery()
        )
        query = (
            select(
                review_threads.c.id, review_threads.c.title, review_threads.c.updated_at, turns.label("turns")
            )
            .where(review_threads.c.review_id == review_id)
            .order_by(review_threads.c.updated_at.desc(), review_threads.c.id.desc())
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def get_thread(self, thread_id: int) -> ThreadRecord | None:
        """{id, review_id, title, state} or None."""
        with self.engine.connect() as conn:
            row = conn.execute(select(review_threads).where(review_threads.c.id == thread_id)).first()
        if row is None:
            return None
        m = row._mapping
        state = ThreadState(
            conversation_summary=m["conversation_summary"],
            summary_up_to_turn=m["summary_up_to_turn"],
            last_section_mention_turn=m["last_section_mention_turn"],
            last_section_paragraph_numbers=m["last_section_paragraph_numbers"],
        )
        return ThreadRecord(id=m["id"], review_id=m["review_id"], title=m["title"], state=state)

    def thread_state(self, thread_id: int) -> ThreadState:
        thread = self.get_thread(thread_id)
        if thread is None:
            raise KeyError(f"review thread {thread_id} not found")
        return thread["state"]

    def update_thread_state(self, thread_id: int, state: ThreadState) -> None:
        """All four spec columns at once (tests, tools); a turn writes them through save_turn / save_summary."""
        with self.engine.begin() as conn:
            conn.execute(
                review_threads.update()
                .where(review_threads.c.id == thread_id)
                .values(**_state_values(state), updated_at=self.now())
            )

    # messages
    def save_turn(
        self,
        thread_id: int,
        turn: int,
        user_text: str,
        assistant_text: str,
        state: ThreadState,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """One completed rally and the paragraph columns of the state after it, in one transaction.

        The summary columns are left alone: only `save_summary` writes them, so a summary made in the
        background while the next turn is saved is never overwritten with the older one.
        """
        now = self.now()
        rows = [
            {"thread_id": thread_id, "turn": turn, "role": "user", "content": user_text, "meta": "{}"},
            {
                "thread_id": thread_id,
                "turn": turn,
                "role": "assistant",
                "content": assistant_text,
                "meta": json.dumps(meta or {}, ensure_ascii=False),
            },
        ]
        values: dict[str, Any] = {**_paragraph_values(state), "updated_at": now}
        if turn == 1:
            values["title"] = " ".join(user_text.split())[:THREAD_TITLE_CHARS]
        with self.engine.begin() as conn:
            conn.execute(review_messages.insert(), [{**r, "created_at": now} for r in rows])
            conn.execute(review_threads.update().where(review_threads.c.id == thread_id).values(**values))

    def save_summary(self, thread_id: int, state: ThreadState) -> bool:
        """The summary columns of `state`, only when they reach further than the stored ones (a late or
        repeated summary never moves `summary_up_to_turn` back). True when written."""
        with self.engine.begin() as conn:
            result = conn.execute(
                review_threads.update()
                .where(
                    review_threads.c.id == thread_id,
                    review_threads.c.summary_up_to_turn < state.summary_up_to_turn,
                )
                .values(**_summary_values(state), updated_at=self.now())
            )
            return bool(result.rowcount)

    def load_messages(self, thread_id: int) -> list[ChatMessage]:
        query = (
            select(
                review_messages.c.role,
                review_messages.c.content,
                review_messages.c.turn,
                review_messages.c.meta,
            )
            .where(review_messages.c.thread_id == thread_id)
            .order_by(review_messages.c.id)
        )
        with self.engine.connect() as conn:
            return [
                ChatMessage(row.role, row.content, row.turn, json.loads(row.meta or "{}"))
                for row in conn.execute(query)
            ]
