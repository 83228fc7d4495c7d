"""One row per person and review content: the unique (owner_id, content_hash) index, ON CONFLICT inserts under
concurrent imports (SQLite and PostgreSQL), and migration v0011 merging duplicates stored before it."""

from __future__ import annotations

import threading

import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine, func, select

from core.store.migrate import alembic_config, current_revision, head_revision
from core.store.review.manage import ManagedReviewRepository
from core.store.review.repository import review_reviews, review_threads, review_values
from tests.core.test_review_messages import REVIEW
from tests.persons import ALICE, BOB

CALLERS = 20


def _import_together(engine: Engine, owner_id: str) -> list[tuple[int, bool]]:
    """CALLERS threads, each with its own repository, import the same review at the same moment."""
    barrier = threading.Barrier(CALLERS)
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        repo = ManagedReviewRepository(engine, owner_id=owner_id)
        barrier.wait()
        try:
            outcome = repo.add_own_review(REVIEW)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            with lock:
                errors.append(exc)
            return
        with lock:
            results.append(outcome)

    workers = [threading.Thread(target=run) for _ in range(CALLERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert errors == []
    return results


def _rows(engine: Engine, owner_id: str) -> list[int]:
    with engine.connect() as conn:
        return list(conn.scalars(select(review_reviews.c.id).where(review_reviews.c.owner_id == owner_id)))


def test_concurrent_imports_of_the_same_review_end_as_one_row(engine: Engine) -> None:
    results = _import_together(engine, ALICE.id)
    rows = _rows(engine, ALICE.id)
    assert len(rows) == 1
    assert sorted(results) == sorted([(rows[0], True)] + [(rows[0], False)] * (CALLERS - 1))
    # another person's import of the same content is their own row
    assert ManagedReviewRepository(engine, owner_id=BOB.id).add_own_review(REVIEW)[1] is True
    assert len(_rows(engine, BOB.id)) == 1


def test_v0011_merges_duplicates_into_the_oldest_and_keeps_their_threads(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX uq_review_reviews_owner_content")
        values = {**review_values(REVIEW), "owner_id": ALICE.id, "created_at": 1, "updated_at": 1}
        ids = [
            conn.execute(review_reviews.insert().values(**values)).inserted_primary_key[0] for _ in range(3)
        ]
        for review_id in ids:
            conn.execute(
                review_threads.insert().values(
                    review_id=review_id, title=f"t{review_id}", owner_id=ALICE.id, created_at=1, updated_at=1
                )
            )
    with engine.begin() as conn:
        config = alembic_config(conn)
        command.stamp(config, "0010")
        command.upgrade(config, "head")
    assert current_revision(engine) == head_revision()
    assert _rows(engine, ALICE.id) == [min(ids)]
    with engine.connect() as conn:
        pointed = conn.scalar(
            select(func.count()).select_from(review_threads).where(review_threads.c.review_id == min(ids))
        )
        names = {i["name"] for i in sa.inspect(conn).get_indexes("review_reviews")}
    assert pointed == 3 and "uq_review_reviews_owner_content" in names
