"""A background job's model calls reach the debug log of the person it works for: a job queued by a page on the
in-process worker logs into the page's sink; a job run without it (the team's job engine in a replica, a
`python -m core.jobs`-style worker process) keeps its calls under the person in the database when the page
that queued it records calls (DEBUG on), and the services hand them to the debug page; another person never
sees them. With DEBUG off, or for owed work nobody queued, nothing is kept."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from core.clock import utc_now
from core.debuglog import trace
from core.debuglog.events import CaptureSink, DebugEvent, events_from_jsonl
from core.flows.memory.background import memory_job_key
from core.flows.memory.constants import DEFAULT_EXTRACTION
from core.flows.memory.tasks import MEMORY_TURN_TASK
from core.jobs.engine import EngineQueue
from core.jobs.sweep import requeue_owed
from core.jobs.tasks import JobContext
from core.jobs.worker import BackgroundWorker
from core.services import open_services, task_registry
from core.settings import Settings
from core.store.job_calls import calls_after
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import units
from tests.core.job_worker import CountingClient
from tests.core.test_job_processes import WAIT_S, start_worker, stop, wait_for
from tests.persons import ALICE, BOB

REFLECTION = {"reflection_text": "", "salience": 0.5, "confidence": 0.5, "topic_tags": []}


def episode(engine: Engine, owner: str, mark: str) -> int:
    repo = MemoryRepository(engine, utc_now, owner_id=owner)
    return repo.save_episode(f"【{mark}】 公園を散歩した。", "いいですね。", REFLECTION, source="trailer")


def stored(engine: Engine, owner: str) -> list[DebugEvent]:
    return [e for _, line in calls_after(engine, owner) for e in events_from_jsonl(line)]


def extracted(engine: Engine, unit_id: int) -> bool:
    with engine.connect() as conn:
        return (
            conn.execute(units.select().where(units.c.id == unit_id)).mappings().one()["extract_state"]
            == "done"
        )


def sent(events: list[DebugEvent], mark: str) -> list[DebugEvent]:
    """The call events whose messages carry the test's marker."""
    return [e for e in events if e.kind == "call" and any(mark in m.get("content", "") for m in e.messages)]


def test_owed_work_nobody_queued_keeps_no_calls(tmp_path: Path) -> None:
    services = open_services(Settings(data_dir=tmp_path))
    try:
        engine = services.engine()
        unit_id = episode(engine, ALICE.id, "MA-owed")
        worker = BackgroundWorker(
            threads=1, context=lambda: JobContext(engine, CountingClient(str(tmp_path / "c")))
        )
        try:
            assert requeue_owed(engine, task_registry(), worker.defer_owed, worker.jobs) >= 1
            assert worker.wait(memory_job_key(ALICE.id), timeout=60) and extracted(engine, unit_id)
        finally:
            worker.close()
        assert services.job_calls(ALICE.id) == [] and stored(engine, ALICE.id) == []
    finally:
        services.worker.close()  # open_services made the services' own worker too


def test_a_job_a_page_queued_on_the_in_process_worker_logs_into_the_pages_sink(
    engine: Engine, tmp_path: Path
) -> None:
    unit_id = episode(engine, ALICE.id, "MA-page")
    page_sink = CaptureSink()
    worker = BackgroundWorker(threads=1)
    try:
        context = JobContext(engine, CountingClient(str(tmp_path / "c")), page_sink)
        args = {"owner": ALICE.id, "episode_id": unit_id}
        assert worker.defer(MEMORY_TURN_TASK, memory_job_key(ALICE.id), args, context) is not None
        assert worker.wait(memory_job_key(ALICE.id), timeout=60) and extracted(engine, unit_id)
    finally:
        worker.close()
    assert sent(page_sink.events, "MA-page")
    assert stored(engine, ALICE.id) == []  # the session's own log has them: not kept twice


def engine_turn(pg_engine: Engine, tmp_path: Path, owner: str, mark: str, page_sink: CaptureSink) -> None:
    """A page's turn queues the extraction on the engine (its sink handed over) and a replica's worker runs it."""
    unit_id = episode(pg_engine, owner, mark)
    queue = EngineQueue(
        pg_engine,
        task_registry(),
        lambda: JobContext(pg_engine, CountingClient(str(tmp_path / "c"))),
        poll=0.5,
    )
    try:
        context = JobContext(pg_engine, CountingClient(str(tmp_path / "c")), page_sink)
        with trace.bind(
            session_id="browser-1", flow="memory", conversation_id="c-7", turn=3, parent_id="reply-1"
        ):
            queue.defer(
                MEMORY_TURN_TASK, memory_job_key(owner), {"owner": owner, "episode_id": unit_id}, context
            )
        queue.start_worker()
        wait_for(lambda: extracted(pg_engine, unit_id), engine=pg_engine)
    finally:
        queue.close()


def test_the_engine_worker_of_a_replica_logs_under_the_person_where_the_turn_was(
    pg_engine: Engine, tmp_path: Path
) -> None:
    session_log = CaptureSink()
    page_sink = CaptureSink(session_log)  # DEBUG on: the page's sink forwards to the session's log
    engine_turn(pg_engine, tmp_path, ALICE.id, "MA-engine", page_sink)
    calls = sent(stored(pg_engine, ALICE.id), "MA-engine")
    assert calls and page_sink.events == []  # the engine's worker cannot use the page's sink
    assert {(c.session_id, c.conversation_id, c.turn, c.parent_id) for c in calls} == {
        ("browser-1", "c-7", 3, "reply-1")
    }


def test_with_debug_off_the_engine_worker_keeps_no_calls(pg_engine: Engine, tmp_path: Path) -> None:
    engine_turn(pg_engine, tmp_path, ALICE.id, "MA-off", CaptureSink())  # the last-call view only
    assert stored(pg_engine, ALICE.id) == []


def test_a_worker_process_logs_under_the_person(pg_engine: Engine, pg_database: str, tmp_path: Path) -> None:
    unit_id = episode(pg_engine, BOB.id, "MB-process")
    queue = EngineQueue(
        pg_engine, task_registry(), lambda: JobContext(pg_engine, CountingClient(str(tmp_path / "u")))
    )
    proc = start_worker(pg_database, tmp_path / "calls.txt")
    try:
        context = JobContext(pg_engine, CountingClient(str(tmp_path / "u")), CaptureSink(CaptureSink()))
        args = {"owner": BOB.id, "episode_id": unit_id, "mode": DEFAULT_EXTRACTION}
        assert queue.defer(MEMORY_TURN_TASK, memory_job_key(BOB.id), args, context)
        wait_for(lambda: extracted(pg_engine, unit_id), WAIT_S, pg_engine)
    finally:
        stop(proc)
        queue.close()
    calls = sent(stored(pg_engine, BOB.id), "MB-process")
    assert calls and all(c.flow == "memory" for c in calls)
    assert stored(pg_engine, ALICE.id) == []
