"""Review chat tables and repository: reviews, threads (spec 02 DB（Thread）columns), messages.

Messages are user/assistant only; the per-turn context is never stored (spec 02 注意点). Every text is made
safe for storage on its way in (core.text.safe), so a control character or lone surrogate in material, a
question or a model reply can neither fail the write nor break a page or export that reads it.

Reviews and threads are personal: the repository is bound to one person and reads or writes
only their imported reviews and their threads (and a thread's messages through it). The bundled sample
review is shared (owner NULL): everyone sees it, and each person's threads on it are their own.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    ColumnElement,
    Connection,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    func,
    or_,
    select,
)
from sqlalchemy.exc import IntegrityError

from core.store.base import EpochSeconds, OwnedRepository, inserted_id
from core.store.db import metadata
from core.store.owners import owned_by, owner_column
from core.store.review.models import (
    ChatMessage,
    ReviewRecord,
    ThreadRecord,
    ThreadState,
    safe_record,
)
from core.text.safe import clean_text, safe_value

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
    # sha256 of the normalized question + answer + review JSON (review_models.content_hash): the same content
    # imported or registered again by the same person is found, not stored twice.
    Column("content_hash", String(64), nullable=True, index=True),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
    owner_column(nullable=True),  # NULL: shared (the bundled sample)
    # one row per person and content (v0011): concurrent imports of the same review end as one row
    Index("uq_review_reviews_owner_content", "owner_id", "content_hash", unique=True),
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
    owner_column(),
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


def review_values(record: ReviewRecord) -> dict[str, Any]:
    """The stored columns of a review's content: its fields, the review JSON as text, the content hash (all of
    the record made safe first: core.text.safe)."""
    record = safe_record(record)
    return {
        **record.to_json_dict(),
        "review_json": json.dumps(record.review_json, ensure_ascii=False),
        "content_hash": record.content_hash(),
    }


def _summary_values(state: ThreadState) -> dict[str, Any]:
    return {
        "conversation_summary": clean_text(state.conversation_summary)[0],
        "summary_up_to_turn": state.summary_up_to_turn,
    }


def _paragraph_values(state: ThreadState) -> dict[str, Any]:
    return {
        "last_section_mention_turn": state.last_section_mention_turn,
        "last_section_paragraph_numbers": state.last_section_paragraph_numbers,
    }


def _state_values(state: ThreadState) -> dict[str, Any]:
    return {**_summary_values(state), **_paragraph_values(state)}


class ReviewRepository(OwnedRepository):
    """The three review tables for one person (SQLAlchemy Core, one transaction per call); times are UTC
    epoch seconds. `ReviewRepository(engine, clock, owner_id=...)`."""

    def _visible_review(self) -> ColumnElement[bool]:
        """Reviews this person may open: their own imports and the shared sample."""
        return or_(owned_by(review_reviews, self.owner_id), review_reviews.c.owner_id.is_(None))

    def _own_thread(self, thread_id: int) -> ColumnElement[bool]:
        return (review_threads.c.id == thread_id) & owned_by(review_threads, self.owner_id)

    def owns_thread(self, thread_id: int, conn: Connection | None = None) -> bool:
        query = select(review_threads.c.id).where(self._own_thread(thread_id))
        if conn is not None:
            return conn.execute(query).first() is not None
        with self.engine.connect() as own:
            return own.execute(query).first() is not None

    # reviews
    def add_review(self, record: ReviewRecord, *, sample_key: str | None = None) -> int:
        """Store a review: this person's import, or (with `sample_key`) a shared sample."""
        now = self.now()
        with self.engine.begin() as conn:
            result = conn.execute(
                review_reviews.insert().values(
                    **review_values(record),
                    sample_key=sample_key,
                    owner_id=None if sample_key else self.owner_id,
                    created_at=now,
                    updated_at=now,
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
        """The shared sample and this person's imported reviews, oldest first."""
        query = (
            select(review_reviews.c.id, review_reviews.c.title, review_reviews.c.sample_key)
            .where(self._visible_review())
            .order_by(review_reviews.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def get_review(self, review_id: int) -> ReviewRecord | None:
        """A review this person may open, or None (also for another person's import)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(review_reviews).where(review_reviews.c.id == review_id, self._visible_review())
            ).first()
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
        """A new thread of this person on a review they may open (KeyError otherwise)."""
        now = self.now()
        with self.engine.begin() as conn:
            visible = conn.execute(
                select(review_reviews.c.id).where(review_reviews.c.id == review_id, self._visible_review())
            ).first()
            if visible is None:
                raise KeyError(f"review {review_id} not found")
            result = conn.execute(
                review_threads.insert().values(
                    review_id=review_id,
                    title=clean_text(title)[0],
                    **_state_values(ThreadState()),
                    owner_id=self.owner_id,
                    created_at=now,
                    updated_at=now,
                )
            )
            return inserted_id(result)

    def list_threads(self, review_id: int) -> list[dict[str, Any]]:
        """This person's threads of a review, newest activity first, with their number of completed turns."""
        turns = (
            select(func.count())
            .where(review_messages.c.thread_id == review_threads.c.id, review_messages.c.role == "assistant")
            .scalar_subquery()
        )
        query = (
            select(
                review_threads.c.id, review_threads.c.title, review_threads.c.updated_at, turns.label("turns")
            )
            .where(review_threads.c.review_id == review_id, owned_by(review_threads, self.owner_id))
            .order_by(review_threads.c.updated_at.desc(), review_threads.c.id.desc())
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def get_thread(self, thread_id: int) -> ThreadRecord | None:
        """{id, review_id, title, state} of this person's thread, or None (also for another person's)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(review_threads).where(self._own_thread(thread_id))).first()
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
                .where(self._own_thread(thread_id))
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
        background while the next turn is saved is never overwritten with the older one. KeyError when the
        thread is not this person's.
        """
        now = self.now()
        user_text, assistant_text = clean_text(user_text)[0], clean_text(assistant_text)[0]
        rows = [
            {"thread_id": thread_id, "turn": turn, "role": "user", "content": user_text, "meta": "{}"},
            {
                "thread_id": thread_id,
                "turn": turn,
                "role": "assistant",
                "content": assistant_text,
                "meta": json.dumps(safe_value(meta or {}), ensure_ascii=False),
            },
        ]
        values: dict[str, Any] = {**_paragraph_values(state), "updated_at": now}
        if turn == 1:
            values["title"] = " ".join(user_text.split())[:THREAD_TITLE_CHARS]
        with self.engine.begin() as conn:
            if not self.owns_thread(thread_id, conn):
                raise KeyError(f"review thread {thread_id} not found")
            conn.execute(review_messages.insert(), [{**r, "created_at": now} for r in rows])
            conn.execute(review_threads.update().where(self._own_thread(thread_id)).values(**values))

    def update_reply(self, thread_id: int, turn: int, assistant_text: str, meta: dict[str, Any]) -> bool:
        """Replace the stored reply of `turn` (a continued or regenerated reply) in this person's thread; True
        when it existed (False for another person's thread, which is left alone)."""
        with self.engine.begin() as conn:
            if not self.owns_thread(thread_id, conn):
                return False
            result = conn.execute(
                review_messages.update()
                .where(
                    review_messages.c.thread_id == thread_id,
                    review_messages.c.turn == turn,
                    review_messages.c.role == "assistant",
                )
                .values(
                    content=clean_text(assistant_text)[0],
                    meta=json.dumps(safe_value(meta), ensure_ascii=False),
                )
            )
            conn.execute(
                review_threads.update().where(self._own_thread(thread_id)).values(updated_at=self.now())
            )
            return bool(result.rowcount)

    def delete_turn(self, thread_id: int, turn: int) -> None:
        """Remove the stored rally of `turn` (a cut reply asked again from the start) from this person's
        thread; another person's thread is left alone."""
        with self.engine.begin() as conn:
            if not self.owns_thread(thread_id, conn):
                return
            conn.execute(
                review_messages.delete().where(
                    review_messages.c.thread_id == thread_id, review_messages.c.turn == turn
                )
            )

    def save_summary(self, thread_id: int, state: ThreadState) -> bool:
        """The summary columns of `state`, only when they reach further than the stored ones (a late or
        repeated summary never moves `summary_up_to_turn` back). True when written."""
        with self.engine.begin() as conn:
            result = conn.execute(
                review_threads.update()
                .where(
                    self._own_thread(thread_id),
                    review_threads.c.summary_up_to_turn < state.summary_up_to_turn,
                )
                .values(**_summary_values(state), updated_at=self.now())
            )
            return bool(result.rowcount)

    def load_messages(self, thread_id: int) -> list[ChatMessage]:
        """The messages of this person's thread, in order (empty for another person's thread)."""
        query = (
            select(
                review_messages.c.role,
                review_messages.c.content,
                review_messages.c.turn,
                review_messages.c.meta,
            )
            .join(review_threads, review_threads.c.id == review_messages.c.thread_id)
            .where(review_messages.c.thread_id == thread_id, owned_by(review_threads, self.owner_id))
            .order_by(review_messages.c.id)
        )
        with self.engine.connect() as conn:
            return [
                ChatMessage(row.role, row.content, row.turn, json.loads(row.meta or "{}"))
                for row in conn.execute(query)
            ]
