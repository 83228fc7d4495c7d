"""Databases from before there were people (issue #14): `init_db` (migrations v0005-v0007) gives every personal
row to the local person, keeps the review sample shared, makes memory uniqueness per person, and is
idempotent, on SQLite and PostgreSQL.

The old database is at revision 0004 (the last schema without owners: old unique constraints, no people
table, no search keys), filled with rows the old code would have written. A database of the create_all era
is covered by tests/core/test_migrations.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, inspect, select

from core.flows.diagnosis.booking import list_bookings
from core.flows.knowledge import base as kb
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.graph import upsert_entity
from core.flows.memory.indexing import index_units
from core.flows.memory.retrieval import retrieve
from core.flows.memory.stores import memory_repository
from core.flows.review_chat import list_reviews, list_threads, repository
from core.people import LOCAL_PERSON
from core.store import migrate
from core.store.db import init_db, make_engine, schema_differences
from core.store.diagnosis import diagnosis_bookings
from core.store.knowledge.entries import knowledge_entries, knowledge_entry_versions
from core.store.knowledge.interviews import knowledge_interviews, knowledge_turns
from core.store.memory.tables import entities, payload_episode, payload_loop, units
from core.store.migrate import current_revision, head_revision
from core.store.review.repository import review_messages, review_reviews, review_threads
from tests.persons import ALICE
from tests.servers import PgCluster

T0 = 1_795_255_200


@pytest.fixture(params=["sqlite", "postgresql"])
def old_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        engine = make_engine(tmp_path / "old")
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        engine = make_engine(url=cluster.url(cluster.create_database()))
    migrate.upgrade(engine, "0004")
    with engine.begin() as conn:
        assert "owner_id" not in {c["name"] for c in inspect(conn).get_columns("memory_units")}
        conn.execute(
            knowledge_interviews.insert().values(id="i1", title="古い聞き取り", created_at=T0, updated_at=T0)
        )
        conn.execute(
            knowledge_turns.insert().values(
                interview_id="i1", turn_no=1, created_at=T0, user_text="相談", ok=False
            )
        )
        fields = {"knowledge_title": "古いナレッジ", "contract_type": "売買契約"}
        conn.execute(
            knowledge_entries.insert().values(
                id=1, **fields, created_at=T0, created_by="担当者", updated_at=T0, updated_by="担当者"
            )
        )
        conn.execute(
            knowledge_entry_versions.insert().values(
                entry_id=1, version=1, **fields, edited_at=T0, edited_by="担当者"
            )
        )
        conn.execute(
            diagnosis_bookings.insert().values(
                booking_type="visit", name="お客様", phone="090", created_at=T0
            )
        )
        review = {
            "title": "t",
            "question_text": "q",
            "review_json": "{}",
            "answer_text": "$$[1] a",
            "created_at": T0,
            "updated_at": T0,
        }
        conn.execute(review_reviews.insert().values(id=1, **review, sample_key="sample:x"))
        conn.execute(review_reviews.insert().values(id=2, **review))
        conn.execute(
            review_threads.insert().values(
                id=1, review_id=2, title="古いスレッド", created_at=T0, updated_at=T0
            )
        )
        conn.execute(
            review_messages.insert().values(thread_id=1, turn=1, role="user", content="問", created_at=T0)
        )
        conn.execute(
            units.insert().values(
                id=1, kind="EPISODE", occurred_at=T0, created_at=T0, updated_at=T0, state="active"
            )
        )
        conn.execute(payload_episode.insert().values(unit_id=1, input_text=SAID, reply_text="そうなんだ"))
        conn.execute(
            entities.insert().values(id=1, type_label="PERSON", name="佐藤", created_at=T0, updated_at=T0)
        )
        conn.execute(
            units.insert().values(
                id=2, kind="LOOP", occurred_at=T0, created_at=T0, updated_at=T0, state="active"
            )
        )
        conn.execute(payload_loop.insert().values(unit_id=2, loop_text="転職を伝える", expires_at=T0 + 86400))
        if conn.dialect.name == "postgresql":  # rows inserted with their ids: move the id sequences past them
            for table in (
                "knowledge_entries",
                "review_reviews",
                "review_threads",
                "memory_units",
                "memory_entities",
            ):
                conn.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
                )
    init_db(engine)
    assert current_revision(engine) == head_revision() and schema_differences(engine) == []
    with engine.begin() as conn:
        index_units(conn, None, [1, 2])  # as the old code had indexed them
    yield engine
    engine.dispose()


SAID = "来月転職する予定で、上司の佐藤さんにはまだ言っていない"


def test_old_rows_belong_to_the_local_person(old_engine: Engine) -> None:
    local, alice = knowledge_stores(old_engine, LOCAL_PERSON), knowledge_stores(old_engine, ALICE)
    assert [i["id"] for i in local.interviews.list_interviews()] == ["i1"]
    assert alice.interviews.list_interviews() == [] and alice.interviews.interview_turns("i1") == []
    entry = alice.base.get_entry(1)  # the knowledge base stays shared; the typed name is kept
    assert entry is not None and (entry["created_by"], entry["created_by_id"]) == ("担当者", "local")
    assert [v["edited_by_id"] for v in kb.entry_history(alice.base, 1)] == ["local"]
    assert [b["name"] for b in list_bookings(old_engine, LOCAL_PERSON)] == ["お客様"]
    assert list_bookings(old_engine, ALICE) == []
    assert [r.id for r in list_reviews(repository(old_engine, LOCAL_PERSON))] == [1, 2]
    assert [r.id for r in list_reviews(repository(old_engine, ALICE))] == [1]  # the sample stays shared
    assert [t.id for t in list_threads(repository(old_engine, LOCAL_PERSON), 2)] == [1]
    mine = retrieve(memory_repository(old_engine, LOCAL_PERSON), None, [], "転職の話", T0)
    assert 1 in [c.unit_id for c in mine.candidates] and [lp["unit_id"] for lp in mine.loops] == [2]
    theirs = retrieve(memory_repository(old_engine, ALICE), None, [], "転職の話", T0)
    assert theirs.candidates == [] and theirs.loops == []


def test_memory_uniqueness_becomes_per_person(old_engine: Engine) -> None:
    repo = memory_repository(old_engine, ALICE)
    with repo.begin() as conn:
        assert upsert_entity(conn, ALICE.id, {"type_label": "PERSON", "name": "佐藤"}, T0) != 1
        assert upsert_entity(conn, LOCAL_PERSON.id, {"type_label": "PERSON", "name": "佐藤"}, T0) == 1
    loop = repo.upsert_loop("転職を伝える", 0.8, None, T0 + 86400, 1, T0, T0)
    assert loop != 2


def test_the_upgrade_is_idempotent(old_engine: Engine) -> None:
    def snapshot() -> list[object]:
        with old_engine.connect() as conn:
            return [
                conn.execute(select(func.count()).select_from(t)).scalar()
                for t in (units, entities, review_threads, knowledge_interviews, diagnosis_bookings)
            ] + [sorted(c["name"] for c in inspect(conn).get_columns("memory_entities"))]

    before = snapshot()
    init_db(old_engine)
    assert snapshot() == before
    with old_engine.connect() as conn:
        indexes = {i["name"] for i in inspect(conn).get_indexes("memory_units")}
    assert "ix_memory_units_owner_id" in indexes
