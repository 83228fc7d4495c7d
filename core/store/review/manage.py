"""Managing one's own review material and threads: add without duplicates, edit, rename, delete.

Only the person's own reviews (owner_id = them) can be changed; the shared sample (owner NULL) and another
person's review read as not found. Deleting a review deletes its threads and their messages in the same
transaction (the page asks for an explicit confirmation naming how many threads go with it).
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import ColumnElement, Connection, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.store.owners import owned_by
from core.store.review.models import ReviewRecord, safe_record
from core.store.review.repository import (
    ReviewRepository,
    review_messages,
    review_reviews,
    review_threads,
    review_values,
)
from core.text.safe import clean_text

UpdateOutcome = Literal["updated", "duplicate", "not_found"]


class ManagedReviewRepository(ReviewRepository):
    """`ReviewRepository` plus the changes a person makes to their own reviews and threads."""

    def _own_review(self, review_id: int) -> ColumnElement[bool]:
        return (review_reviews.c.id == review_id) & owned_by(review_reviews, self.owner_id)

    def _same_content(
        self, conn: Connection, digest: str, exclude_id: int | None = None
    ) -> dict[str, Any] | None:
        query = select(review_reviews.c.id, review_reviews.c.title).where(
            review_reviews.c.content_hash == digest, owned_by(review_reviews, self.owner_id)
        )
        if exclude_id is not None:
            query = query.where(review_reviews.c.id != exclude_id)
        row = conn.execute(query.order_by(review_reviews.c.id)).first()
        return dict(row._mapping) if row else None

    def add_own_review(self, record: ReviewRecord) -> tuple[int, bool]:
        """(review id, True) for a newly stored review of this person; (existing id, False) when they already
        have one with the same content (nothing is stored then). The insert is ON CONFLICT DO NOTHING on the
        unique (owner_id, content_hash) index, so imports of the same content at the same moment end as one
        row and every caller gets its id."""
        now = self.now()
        values = {**review_values(record), "owner_id": self.owner_id, "created_at": now, "updated_at": now}
        insert = sqlite_insert if self.engine.dialect.name == "sqlite" else pg_insert
        statement = (
            insert(review_reviews)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["owner_id", "content_hash"])
            .returning(review_reviews.c.id)
        )
        with self.engine.begin() as conn:  # the insert first: it takes the write lock before anything is read
            inserted = conn.execute(statement).scalar_one_or_none()
            if inserted is not None:
                return int(inserted), True
            found = self._same_content(conn, values["content_hash"])
        if found is None:
            raise RuntimeError("review insert conflicted but no row with its content was found")
        return int(found["id"]), False

    def is_own_review(self, review_id: int) -> bool:
        """Whether the review is this person's (editable); False for the sample and others' reviews."""
        with self.engine.connect() as conn:
            return (
                conn.execute(select(review_reviews.c.id).where(self._own_review(review_id))).first()
                is not None
            )

    def update_review(
        self, review_id: int, record: ReviewRecord
    ) -> tuple[UpdateOutcome, dict[str, Any] | None]:
        """Replace the content of this person's review (same id: its threads keep working and read the new
        content at their next turn). ("duplicate", {id, title}) when another of their reviews already has this
        content; ("not_found", None) for the sample or another person's review."""
        with self.engine.begin() as conn:
            if conn.execute(select(review_reviews.c.id).where(self._own_review(review_id))).first() is None:
                return "not_found", None
            found = self._same_content(conn, safe_record(record).content_hash(), exclude_id=review_id)
            if found is not None:
                return "duplicate", found
            conn.execute(
                review_reviews.update()
                .where(self._own_review(review_id))
                .values(**review_values(record), updated_at=self.now())
            )
            return "updated", None

    def rename_review(self, review_id: int, title: str) -> bool:
        """A new title for this person's review; False when it is not theirs."""
        with self.engine.begin() as conn:
            result = conn.execute(
                review_reviews.update()
                .where(self._own_review(review_id))
                .values(title=clean_text(title)[0], updated_at=self.now())
            )
            return bool(result.rowcount)

    def count_threads(self, review_id: int) -> int:
        """How many threads this person has on the review."""
        query = select(func.count()).where(
            review_threads.c.review_id == review_id, owned_by(review_threads, self.owner_id)
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def delete_review(self, review_id: int) -> int | None:
        """Delete this person's review with its threads and their messages; the number of threads deleted, or
        None when the review is not theirs (nothing is deleted then)."""
        with self.engine.begin() as conn:
            if conn.execute(select(review_reviews.c.id).where(self._own_review(review_id))).first() is None:
                return None
            thread_ids = select(review_threads.c.id).where(review_threads.c.review_id == review_id)
            conn.execute(review_messages.delete().where(review_messages.c.thread_id.in_(thread_ids)))
            deleted = conn.execute(review_threads.delete().where(review_threads.c.review_id == review_id))
            conn.execute(review_reviews.delete().where(self._own_review(review_id)))
            return int(deleted.rowcount)

    def rename_thread(self, thread_id: int, title: str) -> bool:
        """A new title for this person's thread (its last activity time stays); False when it is not theirs."""
        with self.engine.begin() as conn:
            result = conn.execute(
                review_threads.update().where(self._own_thread(thread_id)).values(title=clean_text(title)[0])
            )
            return bool(result.rowcount)

    def delete_thread(self, thread_id: int) -> bool:
        """Delete this person's thread and its messages; False when it is not theirs (nothing deleted)."""
        with self.engine.begin() as conn:
            if not self.owns_thread(thread_id, conn):
                return False
            conn.execute(review_messages.delete().where(review_messages.c.thread_id == thread_id))
            conn.execute(review_threads.delete().where(self._own_thread(thread_id)))
            return True
