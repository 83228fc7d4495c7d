"""Re-indexing is a job (issue #22): rows whose vector write failed or never happened are found by the job
sweep's finders (database only, past the reconcile grace period) and indexed by a worker, with no page
visit; on SQLite and PostgreSQL, with the in-process worker and an embedded Chroma."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chromadb.api import ClientAPI
from sqlalchemy import Engine, select

from core.clock import utc_now
from core.flows.knowledge.index import knowledge_collection
from core.flows.knowledge.index_job import INDEX_JOB_KEY, owed_knowledge_index
from core.flows.memory.index_job import memory_index_key, owed_memory_indexes, reindex_memory
from core.flows.memory.indexing import index_units
from core.flows.memory.stores import memory_collection
from core.flows.registry import demo_client
from core.jobs.tasks import JobContext
from core.jobs.worker import BackgroundWorker
from core.people import Person
from core.search.vector_age import RECONCILE_GRACE_SECONDS, stamped
from core.search.vectors import open_chroma
from core.services import task_registry
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository, knowledge_entries
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import units
from tests.persons import ALICE, BOB

EARLIER = 600  # seconds before now: past the grace period


class DownCollection:
    """A vector store that is down: every write fails."""

    def upsert(self, **_: Any) -> None:
        raise ConnectionError("chroma is down")


class CountingCollection:
    """A collection that counts the vectors written through it."""

    def __init__(self, inner: Any):
        self.inner, self.written = inner, []

    def upsert(self, ids: list[str], **kw: Any) -> None:
        self.written += ids
        self.inner.upsert(ids=ids, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def chroma(tmp_path: Path) -> ClientAPI:
    return open_chroma(tmp_path / "vectors")


def episode(repo: MemoryRepository, text: str, collection: Any) -> int:
    """An episode saved the way a turn saves it, its vector written to `collection` after the commit."""
    with repo.begin() as conn:
        unit_id = repo.save_episode(text, "なるほど。", {}, source="default", conn=conn)
        index_units(conn, collection, [unit_id])
    return unit_id


def marks(engine: Engine) -> dict[int, int | None]:
    with engine.connect() as conn:
        return {int(i): t for i, t in conn.execute(select(units.c.id, units.c.indexed_at))}


def sweep_until(engine: Engine, chroma: ClientAPI, done: Callable[[], bool]) -> BackgroundWorker:
    """The in-process worker with its sweep (as `Services.jobs()` starts it), until `done()`."""
    worker = BackgroundWorker(threads=2)
    context = lambda: JobContext(engine, demo_client(), chroma=lambda: chroma)  # noqa: E731
    try:
        worker.start_sweep(engine, task_registry(), context, every=0.2)
        deadline = time.monotonic() + 120
        while not done() and time.monotonic() < deadline:
            time.sleep(0.2)
    except BaseException:  # the caller closes it once it has it; until then, here
        worker.close()
        raise
    return worker


def test_memories_whose_vectors_were_not_written_are_indexed_by_a_job(
    engine: Engine, chroma: ClientAPI
) -> None:
    earlier = MemoryRepository(engine, lambda: utc_now() - EARLIER, owner_id=ALICE.id)
    alice = memory_collection(chroma, ALICE)
    with pytest.raises(ConnectionError):  # the turn's vector write failed after the commit
        episode(earlier, "カレーを作った", DownCollection())
    failed = max(marks(engine))
    skipped = episode(earlier, "散歩に行った", None)  # the process died before its vector write
    written = episode(earlier, "本を読んだ", alice)
    fresh = episode(
        MemoryRepository(engine, owner_id=ALICE.id), "いま書いた", None
    )  # within the grace period
    bobs = episode(MemoryRepository(engine, lambda: utc_now() - EARLIER, owner_id=BOB.id), "泳いだ", None)
    assert marks(engine)[written] is not None and marks(engine)[failed] is None
    owed = owed_memory_indexes(engine)
    assert sorted(o.args["owner"] for o in owed) == sorted([ALICE.id, BOB.id])
    assert {o.key for o in owed} == {memory_index_key(ALICE.id), memory_index_key(BOB.id)}

    worker = sweep_until(engine, chroma, lambda: owed_memory_indexes(engine) == [])
    try:
        assert worker.wait(memory_index_key(ALICE.id), timeout=60)
        assert worker.wait(memory_index_key(BOB.id), timeout=60)
        # (the sweep also ran the episodes' owed extractions: their facts and loops have vectors too)
        vectors = set(alice.get()["ids"])
        assert {str(i) for i in (failed, skipped, written)} <= vectors and str(fresh) not in vectors
        assert str(bobs) in memory_collection(chroma, BOB).get()["ids"]
        stamped_now = marks(engine)
        assert all(stamped_now[i] is not None for i in (failed, skipped, written, bobs))
        assert stamped_now[fresh] is None  # young: its own vector write may still be on its way
        jobs = [j for j in worker.jobs(memory_index_key(ALICE.id)) if j["kind"] == "memory_index"]
        assert jobs and {j["status"] for j in jobs} == {"done"}
        assert "索引のなかった記憶" in jobs[0]["message"] and "件を登録" in jobs[0]["message"]
    finally:
        worker.close()


def test_a_unit_whose_current_vector_is_there_is_marked_without_embedding_it_again(
    engine: Engine, chroma: ClientAPI
) -> None:
    repo = MemoryRepository(engine, lambda: utc_now() - EARLIER, owner_id=ALICE.id)
    collection = CountingCollection(memory_collection(chroma, ALICE))
    current, stale = episode(repo, "新しい", None), episode(repo, "古い", None)
    meta = {"kind": "EPISODE", "occurred_at": 0, "owner_id": ALICE.id}
    collection.inner.upsert(
        ids=[str(current)], documents=["新しい"], metadatas=[stamped(meta)]
    )  # after the unit
    old = stamped(meta, now=utc_now() - 2 * EARLIER)  # written before the unit's last change
    collection.inner.upsert(ids=[str(stale)], documents=["前の文"], metadatas=[old])
    ctx = JobContext(engine, demo_client(), live={"repo": repo, "collection": collection})
    message = reindex_memory(ctx, {"owner": ALICE.id})
    assert collection.written == [str(stale)] and "1 件を登録" in message
    assert collection.inner.get(ids=[str(stale)])["documents"] == ["古い"]
    assert all(t is not None for t in marks(engine).values()) and owed_memory_indexes(engine) == []


def test_knowledge_entries_without_their_vectors_are_indexed_by_a_job(
    engine: Engine, chroma: ClientAPI
) -> None:
    base = KnowledgeBaseRepository(engine, lambda: utc_now() - EARLIER)
    author = Person(ALICE.id, ALICE.name)
    entry = {**dict.fromkeys(ENTRY_FIELDS, "本文"), "knowledge_title": "秘密保持の期間"}
    saved = base.save_entry(entry, by=author)  # saved; its vector write was lost
    archived = base.save_entry({**entry, "knowledge_title": "古い条項"}, by=author)
    collection = knowledge_collection(chroma)
    collection.upsert(ids=[str(archived)], documents=["古い条項"], metadatas=[stamped({"version": 1}, now=0)])
    with engine.begin() as conn:  # its vector was written, then it was archived and the removal was lost
        conn.execute(
            knowledge_entries.update().where(knowledge_entries.c.id == archived).values(indexed_version=1)
        )
    base.set_archived(archived, True, by=author)
    assert owed_knowledge_index(engine) != []

    worker = sweep_until(engine, chroma, lambda: owed_knowledge_index(engine) == [])
    try:
        assert worker.wait(INDEX_JOB_KEY, timeout=60)
        assert collection.get()["ids"] == [str(saved)]
        with engine.connect() as conn:
            rows = dict(
                conn.execute(select(knowledge_entries.c.id, knowledge_entries.c.indexed_version)).all()
            )
        assert rows == {saved: 1, archived: None}
        assert "1 件を登録" in worker.jobs(INDEX_JOB_KEY)[-1]["message"]
    finally:
        worker.close()


def test_the_finders_leave_rows_younger_than_the_grace_period(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=ALICE.id)
    episode(repo, "書いたばかり", None)
    KnowledgeBaseRepository(engine).save_entry(dict.fromkeys(ENTRY_FIELDS, "本文"), by=ALICE)
    assert owed_memory_indexes(engine) == [] and owed_knowledge_index(engine) == []
    later = utc_now() + RECONCILE_GRACE_SECONDS + 1
    assert [o.args for o in owed_memory_indexes(engine, now=later)] == [{"owner": ALICE.id}]
    assert len(owed_knowledge_index(engine, now=later)) == 1
