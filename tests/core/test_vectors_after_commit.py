"""Vectors are written after the rows they index have committed, never for a rolled-back row; a reconcile
leaves a vector without a visible row alone while it is younger than the grace period (another replica may
have just written it), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection
from sqlalchemy import Engine, select

from core.flows.knowledge import base as kb
from core.flows.knowledge.index import reconcile_knowledge_index
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.chat import run_turn
from core.flows.memory.indexing import index_units
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.stores import memory_collection
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vector_age import INDEXED_AT, RECONCILE_GRACE_SECONDS, stamped
from core.search.vectors import open_chroma
from core.store.knowledge.entries import ENTRY_FIELDS
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import units
from tests.core.test_memory_flow import NOW, USER, combined_turn_outputs
from tests.persons import ALICE

T = 1_800_000_000  # when the "other replica" wrote its vector


class CommitWitness:
    """A collection that records, for every upsert, whether another connection already sees each unit row."""

    def __init__(self, inner: Collection, other: Engine):
        self.inner, self.other = inner, other
        self.seen: list[tuple[str, bool]] = []

    def upsert(self, ids: list[str], **kw: Any) -> None:
        with self.other.connect() as conn:
            visible = {str(i) for i in conn.execute(select(units.c.id)).scalars()}
        self.seen += [(i, i in visible) for i in ids]
        self.inner.upsert(ids=ids, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def memory(engine: Engine, tmp_path: Path) -> tuple[MemoryRepository, Collection]:
    return MemoryRepository(engine, owner_id=LOCAL_PERSON.id), memory_collection(
        open_chroma(tmp_path), LOCAL_PERSON
    )


def test_a_chat_turn_writes_its_vectors_once_the_rows_are_committed(
    memory: tuple[MemoryRepository, Collection], engine_factory: Callable[[], Engine]
) -> None:
    repo, collection = memory
    witness = CommitWitness(collection, engine_factory())
    _prepared, outcome = run_turn(repo, witness, ReplayClient(combined_turn_outputs()), [], USER, NOW)  # type: ignore[arg-type]
    assert outcome.ok and outcome.episode_id is not None
    assert witness.seen[0] == (str(outcome.episode_id), True)  # the episode: visible to another replica first
    assert witness.seen and all(visible for _, visible in witness.seen)  # and every fact, loop, summary
    written = collection.get(ids=[str(outcome.episode_id)], include=["metadatas"])["metadatas"]
    assert written is not None and isinstance(written[0][INDEXED_AT], int)


def test_a_rolled_back_row_gets_no_vector(memory: tuple[MemoryRepository, Collection]) -> None:
    repo, collection = memory
    with pytest.raises(RuntimeError, match="rolled back"), repo.begin() as conn:
        unit_id = repo.save_episode("消える入力", "消える返答", {}, source="default", conn=conn)
        index_units(conn, collection, [unit_id])
        assert collection.get(ids=[str(unit_id)])["ids"] == []  # not while the transaction is open
        raise RuntimeError("rolled back")
    assert collection.count() == 0
    with repo.connect() as conn:
        assert conn.execute(select(units.c.id)).all() == []


def test_a_young_vector_of_a_row_another_replica_has_not_committed_survives_reconcile(
    memory: tuple[MemoryRepository, Collection], engine_factory: Callable[[], Engine]
) -> None:
    repo, collection = memory
    other = MemoryRepository(engine_factory(), owner_id=LOCAL_PERSON.id)
    with other.engine.begin() as conn:  # replica B, mid-transaction (as an older replica wrote vectors)
        unit_id = other.save_episode("書きかけ", "返答", {}, source="default", conn=conn)
        index_units(conn, None, [unit_id])  # its keyword rows
        meta = {"kind": "EPISODE", "occurred_at": NOW, "owner_id": LOCAL_PERSON.id}
        collection.upsert(ids=[str(unit_id)], documents=["書きかけ"], metadatas=[stamped(meta, now=T)])
        report = reconcile_memory_index(repo, collection, now=T + RECONCILE_GRACE_SECONDS - 1)
        assert (report.units, report.removed) == (0, [])
        assert collection.get(ids=[str(unit_id)])["ids"] == [str(unit_id)]
    # committed: the vector is its unit's, and the next reconcile has nothing to do
    again = reconcile_memory_index(repo, collection, now=T + RECONCILE_GRACE_SECONDS + 600)
    assert (again.units, again.vectors, again.indexed, again.removed) == (1, 1, [], [])


def test_a_vector_without_a_row_goes_once_the_grace_period_is_over(
    memory: tuple[MemoryRepository, Collection],
) -> None:
    repo, collection = memory
    collection.upsert(ids=["777"], documents=["孤児"], metadatas=[stamped({"kind": "EPISODE"}, now=T)])
    assert reconcile_memory_index(repo, collection, now=T + RECONCILE_GRACE_SECONDS - 1).removed == []
    assert reconcile_memory_index(repo, collection, now=T + RECONCILE_GRACE_SECONDS).removed == ["777"]
    assert collection.count() == 0


def test_knowledge_reconcile_leaves_a_young_vector_alone(engine: Engine, tmp_path: Path) -> None:
    stores = knowledge_stores(engine, ALICE, clock=lambda: NOW, chroma=open_chroma(tmp_path))
    entry = {**dict.fromkeys(ENTRY_FIELDS, "本文"), "knowledge_title": "保存済み"}
    entry_id, _ = kb.save_draft(
        stores.base, entry, by=ALICE, interview_id=None, saved_entry_id=None, index=stores.index
    )
    collection = stores.index.collection
    (meta,) = collection.get(ids=[str(entry_id)], include=["metadatas"])["metadatas"] or []
    assert meta["version"] == 1 and isinstance(meta[INDEXED_AT], int)
    # an entry another replica saved after this reconcile read the entries: its vector is young
    collection.upsert(ids=["9001"], documents=["別のレプリカ"], metadatas=[stamped({"version": 1}, now=T)])
    report = reconcile_knowledge_index(stores.base, collection, now=T + RECONCILE_GRACE_SECONDS - 1)
    assert (report.indexed, report.removed) == ([], [])
    report = reconcile_knowledge_index(stores.base, collection, now=T + RECONCILE_GRACE_SECONDS)
    assert (report.indexed, report.removed) == ([], ["9001"])
    assert collection.get()["ids"] == [str(entry_id)]
