"""Jobs that are safe to run twice, owed work queued again, job status read from the database (both engines
where the behaviour is the store's; PostgreSQL for the engine's own tables, skipped with the reason without
it)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, inspect, select

from core.clock import utc_now
from core.flows.memory.background import memory_job_key, run_memory_job
from core.flows.memory.extraction_store import claim_extraction
from core.flows.memory.graph import upsert_entity
from core.flows.memory.tasks import owed_extractions
from core.flows.registry import demo_client
from core.flows.review_chat import load_sample_review
from core.flows.review_chat.models import ThreadState
from core.flows.review_chat.summary_job import SUMMARY_TASK, owed_summaries, summary_job, summary_job_key
from core.jobs.engine import EngineQueue
from core.jobs.sweep import requeue_owed
from core.jobs.tasks import JobContext, OwedJob, TaskRegistry
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, stream_from_reply
from core.services import task_registry
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_SUMMARY, entities, payload_summary, units
from core.store.review.repository import ReviewRepository
from tests.core.job_worker import CountingClient

REFLECTION = {"reflection_text": "", "salience": 0.5, "confidence": 0.5, "topic_tags": []}


def episode(engine: Engine, owner: str = "alice", text: str = "【Malice-0】 散歩した。") -> int:
    repo = MemoryRepository(engine, utc_now, owner_id=owner)
    return repo.save_episode(text, "いいですね。", REFLECTION, source="trailer")


def thread_with_five_turns(engine: Engine, owner: str = "alice", mark: str = "MT0") -> int:
    repo = ReviewRepository(engine, utc_now, owner_id=owner)
    thread_id = repo.create_thread(repo.ensure_sample(load_sample_review(), "sample"))
    for turn in range(1, 6):
        repo.save_turn(thread_id, turn, f"【{mark}】 質問{turn}", f"回答{turn}", ThreadState())
    return thread_id


def calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


class FailingClient:
    provider, model = "demo", "failing"

    def complete(self, request: LLMRequest) -> LLMReply:
        raise ProviderError("timeout", "遅すぎます")

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


def test_the_second_claimer_of_an_episode_gets_nothing_and_does_nothing(
    engine: Engine, tmp_path: Path
) -> None:
    unit_id = episode(engine)
    repo = MemoryRepository(engine, utc_now, owner_id="alice")
    assert claim_extraction(repo, unit_id, "job-a")
    assert not claim_extraction(repo, unit_id, "job-b")  # 0 rows: a second replica's job
    assert claim_extraction(repo, unit_id, "job-a")  # the same job, retried after its worker died
    assert not claim_extraction(MemoryRepository(engine, utc_now, owner_id="bob"), unit_id, "job-c")

    path = tmp_path / "calls.txt"
    result = run_memory_job(repo, None, CountingClient(str(path)), unit_id, claim="job-b")
    assert result.extraction is None and calls(path) == []  # no model call
    assert "別の処理がすでに整理した" in result.message()
    done = run_memory_job(repo, None, CountingClient(str(path)), unit_id, claim="job-a")
    assert done.extraction is not None and done.extraction.ok
    assert [c.split()[1] for c in calls(path) if c.startswith("done")][:1] == ["extract_all"]
    assert not claim_extraction(repo, unit_id, "job-d")  # done: nobody claims it again


def test_summaries_and_entities_written_twice_are_one_row(engine: Engine) -> None:
    repo = MemoryRepository(engine, utc_now, owner_id="alice")
    data = {"summary_text": "一回目"}
    with repo.begin() as conn:
        first = repo.insert_unit_once(
            KIND_SUMMARY,
            {
                "scope_label": "bond",
                "scope_key": "rolling:7d",
                "range_start": 0,
                "range_end": 1,
                "summary_text": "a",
            },
            ["owner_id", "scope_label", "scope_key"],
            occurred_at=1,
            now=1,
            conn=conn,
        )
        # a second writer that looked before the first committed: ON CONFLICT DO NOTHING, no IntegrityError
        second = repo.insert_unit_once(
            KIND_SUMMARY,
            {
                "scope_label": "bond",
                "scope_key": "rolling:7d",
                "range_start": 0,
                "range_end": 1,
                "summary_text": "b",
            },
            ["owner_id", "scope_label", "scope_key"],
            occurred_at=1,
            now=1,
            conn=conn,
        )
    assert first is not None and second is None
    assert repo.upsert_summary("bond", "rolling:7d", 0, 2, data, [1]) == first  # later runs update in place
    with repo.connect() as conn:
        assert conn.execute(select(func.count()).select_from(payload_summary)).scalar_one() == 1
        assert (
            conn.execute(select(func.count()).select_from(units).where(units.c.kind == KIND_SUMMARY)).scalar()
            == 1
        )
    with repo.begin() as conn:
        a = upsert_entity(conn, "alice", {"type_label": "PERSON", "name": "田中", "roles": ["同僚"]}, 1)
        b = upsert_entity(conn, "alice", {"type_label": "PERSON", "name": "田中", "roles": ["友人"]}, 2)
    assert a == b
    with repo.connect() as conn:
        assert conn.execute(select(func.count()).select_from(entities)).scalar_one() == 1


def test_a_summary_of_a_segment_already_summarised_says_so(engine: Engine, tmp_path: Path) -> None:
    thread_id = thread_with_five_turns(engine)
    repo = ReviewRepository(engine, utc_now, owner_id="alice")
    stale = repo.thread_state(thread_id)  # what a second job read before the first one stored its summary
    assert "要約しました" in summary_job(repo, demo_client(), thread_id)()
    repo.thread_state = lambda _tid: stale  # type: ignore[method-assign]
    message = summary_job(repo, demo_client(), thread_id)()
    assert "すでに要約済み" in message and "使いませんでした" in message
    assert ReviewRepository(engine, utc_now, owner_id="alice").thread_state(thread_id).summary_up_to_turn == 5


def test_owed_work_in_the_database_is_queued_again_and_done_once(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "calls.txt"
    unit_id = episode(engine)
    thread_id = thread_with_five_turns(engine)
    assert [o.args["episode_id"] for o in owed_extractions(engine)] == [unit_id]
    assert [o.args["thread_id"] for o in owed_summaries(engine)] == [thread_id]
    worker = BackgroundWorker(threads=2, context=lambda: JobContext(engine, CountingClient(str(path))))
    try:
        registry = task_registry()
        assert requeue_owed(engine, registry, worker.defer_owed, worker.jobs) == 2
        assert worker.wait(memory_job_key("alice"), timeout=30)
        assert worker.wait(summary_job_key(thread_id, "alice"), timeout=30)
        assert owed_extractions(engine) == [] and owed_summaries(engine) == []
        assert requeue_owed(engine, registry, worker.defer_owed, worker.jobs) == 0  # nothing owed any more
    finally:
        worker.close()
    done = [c.split()[1] for c in calls(path) if c.startswith("done")]
    assert done.count("extract_all") == 1 and done.count("summarize") == 1


def test_a_failed_summary_is_left_to_the_retry_button(engine: Engine) -> None:
    thread_id = thread_with_five_turns(engine)
    worker = BackgroundWorker(threads=1, context=lambda: JobContext(engine, FailingClient()))
    try:
        registry = task_registry()
        assert requeue_owed(engine, registry, worker.defer_owed, worker.jobs) == 1
        assert worker.wait(summary_job_key(thread_id, "alice"), timeout=30)
        assert worker.jobs(summary_job_key(thread_id, "alice"))[-1]["status"] == "failed"
        assert requeue_owed(engine, registry, worker.defer_owed, worker.jobs) == 0  # not every minute
    finally:
        worker.close()


def test_the_engine_tables_are_made_on_postgresql_only(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    assert "job_messages" in tables
    assert ("procrastinate_jobs" in tables) == (engine.dialect.name == "postgresql")


def test_every_replica_reads_the_same_status_from_the_database(pg_engine: Engine, tmp_path: Path) -> None:
    thread_id = thread_with_five_turns(pg_engine)
    key, args = summary_job_key(thread_id, "alice"), {"owner": "alice", "thread_id": thread_id}
    a, b = (
        EngineQueue(pg_engine, task_registry(), lambda: JobContext(pg_engine, FailingClient())) for _ in "ab"
    )
    try:
        job = a.defer(SUMMARY_TASK, key, args)
        assert job is not None
        assert [(j["id"], j["status"], j["kind"]) for j in b.jobs(key)] == [(job.id, "queued", "summary")]
        assert b.busy(key) and b.busy(key, "summary") and not b.busy(key, "memory")
        again = b.defer(SUMMARY_TASK, key, args)  # one waiting summary per thread, whichever replica asks
        assert again is not None and again.id == job.id
        assert b.summary()["counts"]["queued"] == 1

        a.start_worker()  # replica A runs it; its model fails
        assert b.wait(key, timeout=60)
        view = b.jobs(key)[-1]
        assert view["status"] == "failed" and "会話の要約を作成できませんでした" in view["message"]
        summary = b.summary()
        assert summary["counts"]["failed"] == 1 and summary["failures"][0]["message"] == view["message"]
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("when", ["pending", "stale"])
def test_a_stale_claim_is_owed_again(engine: Engine, when: str) -> None:
    unit_id = episode(engine)
    repo = MemoryRepository(engine, utc_now, owner_id="alice")
    if when == "stale":
        assert claim_extraction(repo, unit_id, "dead-job", now=int(time.time()) - 3600)
    assert [o.args["episode_id"] for o in owed_extractions(engine)] == [unit_id]
    assert claim_extraction(repo, unit_id, "new-job")
    assert owed_extractions(engine) == []  # a live claim is not owed


def test_services_open_the_engine_on_postgresql_and_the_worker_on_sqlite(
    pg_database: str, tmp_path: Path
) -> None:
    from core.services import open_services  # noqa: PLC0415 - beside the engine test it belongs to
    from core.settings import JobSettings, Settings  # noqa: PLC0415

    local = open_services(Settings(data_dir=tmp_path / "one"))
    try:
        assert isinstance(local.jobs(), BackgroundWorker) and local.jobs().summary()["engine"] == "in-process"
    finally:
        local.worker.close()

    team = open_services(
        Settings(data_dir=tmp_path / "team", database_url=pg_database, jobs=JobSettings(sweep_s=1.0))
    )
    queue = team.jobs()
    try:
        assert isinstance(queue, EngineQueue)
        thread_id = thread_with_five_turns(team.engine())
        # the replica's own worker (started by jobs()) finds the owed summary and makes it with the demo model
        state = ReviewRepository(team.engine(), utc_now, owner_id="alice").thread_state(thread_id)
        deadline = time.monotonic() + 90
        while state.summary_up_to_turn != 5 and time.monotonic() < deadline:
            time.sleep(0.2)
            state = ReviewRepository(team.engine(), utc_now, owner_id="alice").thread_state(thread_id)
        assert state.summary_up_to_turn == 5
    finally:
        queue.close()


def test_stopping_the_worker_waits_for_a_sweep_under_way_and_leaves_no_pool_open(pg_engine: Engine) -> None:
    """A sweep cancelled while its finder still reads the database finishes before stop_worker returns: what
    it found is queued, and it cannot open the deferring connection pool again once the worker is stopped
    (a pool left open keeps threads retrying against a database that is gone)."""
    thread_id = thread_with_five_turns(pg_engine)
    key = summary_job_key(thread_id, "alice")
    entered, release = threading.Event(), threading.Event()

    def slow_finder(engine: Engine) -> list[OwedJob]:
        entered.set()
        release.wait(10)
        return owed_summaries(engine)

    registry = TaskRegistry(tasks=dict(task_registry().tasks), finders=[slow_finder])
    before = {t.name for t in threading.enumerate()}
    queue = EngineQueue(pg_engine, registry, lambda: JobContext(pg_engine, FailingClient()))
    other = EngineQueue(pg_engine, task_registry(), lambda: JobContext(pg_engine, FailingClient()))
    try:
        queue.start_worker()
        assert entered.wait(30)
        threading.Timer(0.3, release.set).start()
        queue.stop_worker(timeout=10)
        assert release.is_set()  # it waited for the sweep
        assert [j["status"] for j in other.jobs(key)] == ["queued"]  # what the sweep found is queued
        time.sleep(0.5)
        pools = {t.name for t in threading.enumerate()} - before
        assert not [name for name in pools if name.startswith("pool-")], pools
    finally:
        queue.close()
        other.close()


def test_stopping_the_worker_before_its_thread_has_begun_stops_it(pg_engine: Engine) -> None:
    """stop_worker right after start_worker, before the worker's thread has made its event loop (held at a gate
    here): the worker must not start afterwards (it would run, with its connection pool, until the process ends)."""
    queue = EngineQueue(pg_engine, task_registry(), lambda: JobContext(pg_engine, FailingClient()))
    gate = threading.Event()
    run = queue.run_worker

    def gated() -> None:
        gate.wait(10)
        run()

    queue.run_worker = gated  # type: ignore[method-assign]
    try:
        queue.start_worker()
        queue.stop_worker(timeout=0.2)  # the thread is still at the gate
        gate.set()
        assert queue._thread is not None
        queue._thread.join(10)
        assert not queue._thread.is_alive()
    finally:
        gate.set()
        queue.close()
