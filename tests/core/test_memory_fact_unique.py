"""One active fact per person and identity (issue #22): the unique (owner_id, active_key) index, writers racing
on it (SQLite and PostgreSQL), edits and entity merges that would make two facts the same, and migration v0015
merging duplicates stored before it."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine, select

from core.flows.memory.entities import merge_entities
from core.flows.memory.graph import upsert_entity
from core.flows.memory.versions import EditError, edit_unit, restore, soft_delete, versions_of
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_FACT,
    STATE_ACTIVE,
    STATE_DELETED,
    fact_key,
    payload_fact,
    units,
)
from core.store.migrate import alembic_config, current_revision, head_revision
from tests.persons import ALICE, BOB

NOW = 1_795_000_000
CALLERS = 12
LIKES_RAMEN = {"predicate": "likes", "predicate_raw": "好き", "object_text": "ラーメン", "confidence": 0.6}


def _repo(engine: Engine, owner_id: str = ALICE.id) -> MemoryRepository:
    return MemoryRepository(engine, lambda: NOW, owner_id=owner_id)


def _entity(repo: MemoryRepository, name: str) -> int:
    with repo.begin() as conn:
        return upsert_entity(conn, repo.owner_id, {"type_label": "PERSON", "name": name}, NOW)


def _facts(engine: Engine, owner_id: str = ALICE.id) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                payload_fact.c.unit_id,
                payload_fact.c.evidence_unit_ids_json,
                payload_fact.c.active_key,
                units.c.state,
                units.c.confidence,
            )
            .join(units, units.c.id == payload_fact.c.unit_id)
            .where(units.c.owner_id == owner_id)
            .order_by(payload_fact.c.unit_id)
        ).mappings()
        return [{**r, "evidence": json.loads(r["evidence_unit_ids_json"])} for r in rows]


def test_concurrent_writers_of_one_fact_end_as_one_unit_with_every_evidence(engine: Engine) -> None:
    subject = _entity(_repo(engine), "SPEAKER")
    barrier = threading.Barrier(CALLERS)
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def write(evidence: int) -> None:
        repo = _repo(engine)
        barrier.wait()
        try:
            outcome = repo.upsert_fact(
                {**LIKES_RAMEN, "confidence": evidence / 100}, subject, None, evidence, NOW
            )
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            with lock:
                errors.append(exc)
            return
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=write, args=(100 + i,)) for i in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    (fact,) = _facts(engine)
    assert sorted(results) == sorted([(fact["unit_id"], True)] + [(fact["unit_id"], False)] * (CALLERS - 1))
    assert sorted(fact["evidence"]) == [100 + i for i in range(CALLERS)]
    assert fact["confidence"] == pytest.approx((100 + CALLERS - 1) / 100)
    assert fact["active_key"] == fact_key(subject, "likes", "ラーメン")


def _wait_for_a_blocked_writer(engine: Engine, writer: threading.Thread) -> None:
    """Until `writer` waits on the open transaction (PostgreSQL shows it; SQLite: long enough for it to try).
    A writer that ended without waiting ends the wait too (the caller's assertions then say what it did)."""
    if engine.dialect.name != "postgresql":
        time.sleep(1.0)
        return
    deadline = time.monotonic() + 60  # generous: a loaded 2-core machine can be slow to start a thread
    with engine.connect() as conn:
        while time.monotonic() < deadline and writer.is_alive():
            waiting = conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND datname = current_database()"
                )
            ).scalar()
            if waiting:
                return
            time.sleep(0.05)
    if writer.is_alive():
        raise AssertionError("the second writer never waited on the first")


def test_a_writer_that_finds_nothing_then_loses_the_insert_merges_into_the_winner(engine: Engine) -> None:
    """A stores the fact and has not committed; B looks, finds nothing, inserts, meets A's row on the unique
    index (ON CONFLICT), and once A commits adds its evidence to A's unit."""
    repo_a, repo_b = _repo(engine), _repo(engine)
    subject = _entity(repo_a, "SPEAKER")
    outcome: list[tuple[int, bool]] = []
    with repo_a.begin() as conn:
        first = repo_a.upsert_fact(LIKES_RAMEN, subject, None, 1, NOW, conn=conn)
        second = threading.Thread(
            target=lambda: outcome.append(
                repo_b.upsert_fact({**LIKES_RAMEN, "confidence": 0.9}, subject, None, 2, NOW)
            )
        )
        second.start()
        _wait_for_a_blocked_writer(engine, second)
    second.join(60)
    assert first[1] is True and outcome == [(first[0], False)]
    (fact,) = _facts(engine)
    assert fact["evidence"] == [1, 2] and fact["confidence"] == pytest.approx(0.9)


def test_the_same_fact_of_another_person_or_a_deleted_one_is_its_own_unit(engine: Engine) -> None:
    alice, bob = _repo(engine), _repo(engine, BOB.id)
    ours, theirs = _entity(alice, "SPEAKER"), _entity(bob, "SPEAKER")
    fact_id, _ = alice.upsert_fact(LIKES_RAMEN, ours, None, 1, NOW)
    assert bob.upsert_fact(LIKES_RAMEN, theirs, None, 7, NOW)[1] is True
    soft_delete(alice, None, fact_id, NOW + 1)
    again, created = alice.upsert_fact(LIKES_RAMEN, ours, None, 2, NOW + 2)
    assert created and again != fact_id
    facts = _facts(engine)
    assert [(f["state"], f["evidence"], f["active_key"] is None) for f in facts] == [
        (STATE_DELETED, [1], True),
        (STATE_ACTIVE, [2], False),
    ]
    with pytest.raises(EditError, match=f"有効な記憶 #{again} と同じ事実"):
        restore(alice, None, fact_id, NOW + 3)  # two active copies of one fact: refused, nothing written
    assert [f["state"] for f in _facts(engine)] == [STATE_DELETED, STATE_ACTIVE]
    edit_unit(
        alice, None, again, {"object_text": "うどん"}, NOW + 4
    )  # another fact now: the first may return
    restore(alice, None, fact_id, NOW + 5)
    assert [f["state"] for f in _facts(engine)] == [STATE_ACTIVE, STATE_ACTIVE]
    with pytest.raises(EditError, match=f"有効な記憶 #{fact_id} と同じ事実"):
        edit_unit(alice, None, again, {"object_text": "ラーメン"}, NOW + 6)


def test_merging_two_entities_merges_their_facts_that_became_one(engine: Engine) -> None:
    repo = _repo(engine)
    keep, other = _entity(repo, "田中"), _entity(repo, "田中さん（同僚）")
    kept_fact, _ = repo.upsert_fact(LIKES_RAMEN, keep, None, 1, NOW)
    moved_fact, _ = repo.upsert_fact({**LIKES_RAMEN, "confidence": 0.9}, other, None, 2, NOW)
    report = merge_entities(repo, keep, [other])
    assert report.facts_merged == 1
    facts = {f["unit_id"]: f for f in _facts(engine)}
    assert facts[kept_fact]["evidence"] == [1, 2] and facts[kept_fact]["confidence"] == pytest.approx(0.9)
    assert facts[moved_fact]["state"] == STATE_DELETED and facts[moved_fact]["active_key"] is None
    assert versions_of(repo, moved_fact)[-1].note == f"同じ事実 #{kept_fact} に統合"


def test_v0015_merges_duplicate_active_facts_into_the_lowest_id(engine: Engine) -> None:
    alice, bob = _repo(engine), _repo(engine, BOB.id)
    subject, bobs = _entity(alice, "SPEAKER"), _entity(bob, "SPEAKER")

    def stored(
        repo: MemoryRepository, subject_id: int, evidence: list[int], confidence: float, at: int
    ) -> int:
        """A fact as the code before v0015 could store it twice (no key: nothing conflicts)."""
        payload = {
            "subject_entity_id": subject_id,
            "predicate": "likes",
            "object_text": "ラーメン",
            "evidence_unit_ids_json": json.dumps(evidence),
        }
        return repo.insert_unit(KIND_FACT, payload, occurred_at=at, now=at, confidence=confidence)

    ids = [stored(alice, subject, [1, 2], 0.5, NOW), stored(alice, subject, [2, 3], 0.8, NOW + 9)]
    ids.append(stored(alice, subject, [4], 0.4, NOW + 5))
    gone = stored(alice, subject, [5], 0.99, NOW + 1)
    soft_delete(alice, None, gone, NOW + 2)  # a deleted copy is not merged
    theirs = stored(bob, bobs, [8], 0.3, NOW)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX uq_memory_fact_active")
        for column in ("active_key", "owner_id"):
            conn.exec_driver_sql(f"ALTER TABLE memory_payload_fact DROP COLUMN {column}")
    with engine.begin() as conn:
        config = alembic_config(conn)
        command.stamp(config, "0014")
        command.upgrade(config, "head")
    assert current_revision(engine) == head_revision()
    facts = {f["unit_id"]: f for f in _facts(engine)}
    kept = facts[ids[0]]
    assert (kept["state"], kept["evidence"], kept["confidence"]) == (STATE_ACTIVE, [1, 2, 3, 4], 0.8)
    assert kept["active_key"] == fact_key(subject, "likes", "ラーメン")
    assert [facts[i]["state"] for i in ids[1:]] == [STATE_DELETED, STATE_DELETED]
    assert facts[gone]["state"] == STATE_DELETED and facts[gone]["evidence"] == [5]
    assert [v.change_kind for v in versions_of(alice, ids[1])] == ["create", "soft_delete"]
    assert versions_of(alice, ids[1])[-1].snapshot["state"] == STATE_DELETED
    assert versions_of(alice, ids[0])[-1].note == f"同じ事実 #{ids[1]}、#{ids[2]} を統合"
    (bobs_fact,) = _facts(engine, BOB.id)
    assert bobs_fact["unit_id"] == theirs and bobs_fact["state"] == STATE_ACTIVE
    with engine.connect() as conn:
        names = {i["name"] for i in sa.inspect(conn).get_indexes("memory_payload_fact")}
        owners = set(conn.execute(select(payload_fact.c.owner_id)).scalars())
    assert "uq_memory_fact_active" in names and owners == {ALICE.id, BOB.id}
    # the next write of that fact finds the kept unit
    assert alice.upsert_fact(LIKES_RAMEN, subject, None, 6, NOW + 20) == (ids[0], False)
    assert _facts(engine)[0]["evidence"] == [1, 2, 3, 4, 6]
