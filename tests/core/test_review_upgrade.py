"""Review store upgrade: rows written with ISO-8601 text timestamps become UTC epoch ints (idempotent, atomic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    CheckConstraint,
    Column,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    inspect,
    select,
)

from core.flows.review_chat import ThreadState, load_sample_review
from core.people import LOCAL_PERSON
from core.store.db import init_db, make_engine
from core.store.review import upgrade as review_upgrade
from core.store.review.repository import ReviewRepository, review_messages, review_reviews, review_threads
from core.store.review.upgrade import epoch_seconds
from tests.persons import ALICE

T0 = 1_795_255_200  # 2026-11-21T10:00:00Z


def old_tables() -> MetaData:
    """The review tables as the code before epoch times declared them (timestamps as text)."""
    old = MetaData()
    Table(
        "review_reviews",
        old,
        Column("id", Integer, primary_key=True),
        Column("title", String, nullable=False),
        Column("question_text", Text, nullable=False),
        Column("purpose_text", Text, nullable=False, default=""),
        Column("grading_impression_text", Text, nullable=False, default=""),
        Column("review_json", Text, nullable=False),
        Column("answer_text", Text, nullable=False),
        Column("sample_key", String, unique=True, nullable=True),
        Column("created_at", String, nullable=False),
        Column("updated_at", String, nullable=False),
    )
    Table(
        "review_threads",
        old,
        Column("id", Integer, primary_key=True),
        Column("review_id", Integer, ForeignKey("review_reviews.id", ondelete="CASCADE"), index=True),
        Column("title", String, nullable=False, default=""),
        Column("conversation_summary", Text, nullable=False, default=""),
        Column("summary_up_to_turn", Integer, nullable=False, default=0),
        Column("last_section_mention_turn", Integer, nullable=True),
        Column("last_section_paragraph_numbers", Text, nullable=True),
        Column("created_at", String, nullable=False),
        Column("updated_at", String, nullable=False),
    )
    Table(
        "review_messages",
        old,
        Column("id", Integer, primary_key=True),
        Column("thread_id", Integer, ForeignKey("review_threads.id", ondelete="CASCADE"), index=True),
        Column("turn", Integer, nullable=False),
        Column("role", String, nullable=False),
        Column("content", Text, nullable=False),
        Column("meta", Text, nullable=False, default="{}"),
        Column("created_at", String, nullable=False),
        CheckConstraint("role IN ('user', 'assistant')", name="review_messages_role"),
    )
    return old


@pytest.fixture
def old_engine(tmp_path: Path) -> Engine:
    """A database written by the old code: one review, one thread with a summary, one rally."""
    engine = make_engine(tmp_path)
    old = old_tables()
    old.create_all(engine)
    reviews, threads, messages = (
        old.tables[t.name] for t in (review_reviews, review_threads, review_messages)
    )
    with engine.begin() as conn:
        conn.execute(
            reviews.insert().values(
                id=3,
                title="T",
                question_text="Q",
                review_json='{"overall_review": "OV"}',
                answer_text="$$[1] a",
                created_at="2026-11-21T10:00:00+00:00",
                updated_at="2026-11-21T19:00:05+09:00",
            )
        )
        conn.execute(
            threads.insert().values(
                id=7,
                review_id=3,
                title="§1 は？",
                conversation_summary="【1～5ターンの要約】\nS",
                summary_up_to_turn=5,
                last_section_mention_turn=1,
                last_section_paragraph_numbers="[1]",
                created_at="2026-11-21T10:00:01+00:00",
                updated_at="2026-11-21T10:00:09",  # naive text is UTC
            )
        )
        for row in (
            {
                "id": 11,
                "role": "user",
                "content": "§1 は？",
                "meta": "{}",
                "created_at": "2026-11-21T10:00:02+00:00",
            },
            {
                "id": 12,
                "role": "assistant",
                "content": "回答",
                "meta": '{"turn": 1}',
                "created_at": "garbled",
            },
        ):
            conn.execute(messages.insert().values(thread_id=7, turn=1, **row))
    return engine


def stored_times(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {
            t.name: [
                tuple(row)
                for row in conn.execute(
                    select(t.c.id, *(func.typeof(t.c[n]) for n in ("created_at", "updated_at") if n in t.c))
                )
            ]
            for t in (review_reviews, review_threads, review_messages)
        } | {
            "values": [
                tuple(row)
                for t in (review_reviews, review_threads)
                for row in conn.execute(select(t.c.created_at, t.c.updated_at))
            ]
            + [tuple(row) for row in conn.execute(select(review_messages.c.created_at))]
        }


def test_old_text_timestamps_become_epoch_ints_and_rows_survive(old_engine: Engine) -> None:
    init_db(old_engine)
    assert stored_times(old_engine) == {
        "review_reviews": [(3, "integer", "integer")],
        "review_threads": [(7, "integer", "integer")],
        "review_messages": [(11, "integer"), (12, "integer")],
        "values": [(T0, T0 + 5), (T0 + 1, T0 + 9), (T0 + 2,), (0,)],  # unreadable text becomes 0 (oldest)
    }
    with old_engine.connect() as conn:
        declared = {
            t.name: str(c["type"])
            for t in (review_reviews, review_threads, review_messages)
            for c in inspect(conn).get_columns(t.name)
            if c["name"] == "created_at"
        }
        assert declared == dict.fromkeys(declared, "INTEGER") and len(declared) == 3
        assert [i["name"] for i in inspect(conn).get_indexes("review_messages")] == [
            "ix_review_messages_thread_id"
        ]
    # issue #14: rows from before there were people belong to the local person, nobody else
    assert ReviewRepository(old_engine, owner_id=ALICE.id).get_thread(7) is None
    repo = ReviewRepository(old_engine, clock=lambda: T0 + 100, owner_id=LOCAL_PERSON.id)
    assert repo.get_thread(7) == {
        "id": 7,
        "review_id": 3,
        "title": "§1 は？",
        "state": ThreadState("【1～5ターンの要約】\nS", 5, 1, "[1]"),
    }
    assert [(m.role, m.content, m.meta) for m in repo.load_messages(7)] == [
        ("user", "§1 は？", {}),
        ("assistant", "回答", {"turn": 1}),
    ]
    assert repo.list_threads(3) == [{"id": 7, "title": "§1 は？", "updated_at": T0 + 9, "turns": 1}]
    repo.save_turn(7, 2, "続き", "回答2", ThreadState())  # foreign keys still hold after the rebuild
    with pytest.raises(Exception, match="FOREIGN KEY"), old_engine.begin() as conn:
        conn.execute(
            review_messages.insert().values(thread_id=99, turn=1, role="user", content="x", created_at=0)
        )


def test_upgrade_is_idempotent(old_engine: Engine) -> None:
    init_db(old_engine)
    first = stored_times(old_engine)
    init_db(old_engine)
    assert stored_times(old_engine) == first


def test_a_failed_upgrade_changes_nothing(old_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    real = review_upgrade._converted

    def failing(row: dict[str, Any], table: Table) -> dict[str, Any]:
        if table.name == "review_messages":
            raise RuntimeError("disk full")
        return real(row, table)

    monkeypatch.setattr(review_upgrade, "_converted", failing)
    with pytest.raises(RuntimeError):
        init_db(old_engine)
    with old_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(review_messages)).scalar() == 2
        assert conn.execute(select(review_threads.c.created_at)).scalar() == "2026-11-21T10:00:01+00:00"


def test_a_new_database_needs_no_upgrade(tmp_path: Path) -> None:
    engine = make_engine(tmp_path)
    init_db(engine)
    repo = ReviewRepository(engine, clock=lambda: T0, owner_id=ALICE.id)
    review_id = repo.add_review(load_sample_review())
    init_db(engine)
    assert repo.list_reviews()[0]["id"] == review_id


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (T0, T0),
        (float(T0) + 0.7, T0),
        (str(T0), T0),
        ("2026-11-21T10:00:00+00:00", T0),
        ("2026-11-21T19:00:00+09:00", T0),
        ("2026-11-21T10:00:00", T0),
        ("2026-11-21 10:00:00Z", T0),
        ("", 0),
        (None, 0),
        ("t", 0),
    ],
)
def test_epoch_seconds(value: Any, expected: int) -> None:
    assert epoch_seconds(value) == expected
