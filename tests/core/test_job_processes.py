"""The job engine across processes, on a real PostgreSQL (skipped with the reason without one): a worker
killed with SIGKILL while memory and review jobs were queued and running leaves nothing owed once another
worker starts, each job done exactly once (model calls counted); two workers on one database run 400 jobs,
each once, one person's in order. Workers are `tests.core.job_worker` subprocesses running the app's tasks
with a counting demo model."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text

from core.clock import utc_now
from core.flows.memory.background import memory_job_key
from core.flows.memory.constants import DEFAULT_EXTRACTION
from core.flows.memory.extraction_store import FINISHED_STEP
from core.flows.memory.tasks import MEMORY_TURN_TASK, episode_dedupe
from core.flows.review_chat import load_sample_review
from core.flows.review_chat.models import ThreadState
from core.flows.review_chat.summary_job import SUMMARY_TASK, summary_job_key
from core.jobs.engine import EngineQueue
from core.jobs.tasks import JobContext
from core.services import task_registry
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import extraction_log, units
from core.store.review.repository import ReviewRepository
from tests.core.job_worker import CountingClient

ROOT = Path(__file__).resolve().parents[2]
REFLECTION = {"reflection_text": "", "salience": 0.5, "confidence": 0.5, "topic_tags": []}
WAIT_S = 120


def start_worker(url: str, calls: Path, *extra: str) -> subprocess.Popen[bytes]:
    """A worker process; its log goes next to the calls file (worker-<pid>.log) for a failing test."""
    log = open(calls.parent / f"worker-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(
        [sys.executable, "-m", "tests.core.job_worker", url, str(calls), *extra],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def lines(calls: Path) -> list[list[str]]:
    return [line.split() for line in calls.read_text().splitlines()] if calls.exists() else []


def wait_for(check, timeout: float = WAIT_S, engine: Engine | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out" + (f"; jobs: {dump(engine)}" if engine is not None else ""))
        time.sleep(0.2)


def dump(engine: Engine) -> str:
    """The job rows and the episodes' extraction states (what a failing test shows)."""
    with engine.connect() as conn:
        jobs = conn.execute(
            text(
                "SELECT j.id, j.task_name, j.lock, j.status, j.attempts, m.status, m.message FROM procrastinate_jobs j"
                " LEFT JOIN job_messages m ON m.job_id = CAST(j.id AS TEXT) ORDER BY j.id"
            )
        ).all()
        states = conn.execute(select(units.c.id, units.c.extract_state, units.c.extract_claim)).all()
    return "\n".join(map(str, [*jobs, *states]))


@pytest.fixture
def queue(pg_engine: Engine, tmp_path: Path) -> Iterator[EngineQueue]:
    """A replica's queue that only defers (its worker is never started); closed after the test, so its
    connection pool does not outlive the database."""
    client = CountingClient(str(tmp_path / "unused"))
    deferring = EngineQueue(pg_engine, task_registry(), lambda: JobContext(pg_engine, client))
    yield deferring
    deferring.close()


def save_episodes(engine: Engine, owner: str, count: int, start: int = 0) -> list[int]:
    repo = MemoryRepository(engine, utc_now, owner_id=owner)
    return [
        repo.save_episode(
            f"【M{owner}-{start + i}】 今日は散歩をした。", "いいですね。", REFLECTION, source="trailer"
        )
        for i in range(count)
    ]


def defer_episode(queue: EngineQueue, owner: str, episode_id: int) -> None:
    args = {"owner": owner, "episode_id": episode_id, "mode": DEFAULT_EXTRACTION}
    assert queue.defer(MEMORY_TURN_TASK, memory_job_key(owner), args, dedupe=episode_dedupe(episode_id))


def thread_with_five_turns(engine: Engine, owner: str, mark: str) -> int:
    repo = ReviewRepository(engine, utc_now, owner_id=owner)
    review_id = repo.ensure_sample(load_sample_review(), "sample")
    thread_id = repo.create_thread(review_id)
    for turn in range(1, 6):
        repo.save_turn(thread_id, turn, f"【{mark}】 質問{turn}", f"回答{turn}", ThreadState())
    return thread_id


def extraction_done(engine: Engine, ids: list[int]) -> bool:
    with engine.connect() as conn:
        states = conn.execute(select(units.c.extract_state).where(units.c.id.in_(ids))).scalars().all()
    return all(s == "done" for s in states)


def jobs_finished(engine: Engine, ids: list[int]) -> bool:
    """Every episode's job has logged its end (after its extraction, its summaries run in a later transaction)."""
    with engine.connect() as conn:
        logged = conn.execute(
            select(extraction_log.c.unit_id).where(
                extraction_log.c.step == FINISHED_STEP, extraction_log.c.unit_id.in_(ids)
            )
        ).scalars()
        return set(logged) == set(ids)


def test_a_worker_killed_mid_job_leaves_nothing_owed_and_nothing_done_twice(
    pg_engine: Engine, pg_database: str, tmp_path: Path, queue: EngineQueue
) -> None:
    calls = tmp_path / "calls.txt"
    episodes = {owner: save_episodes(pg_engine, owner, 3) for owner in ("alice", "bob")}
    for owner, ids in episodes.items():
        for episode_id in ids:
            defer_episode(queue, owner, episode_id)
    threads = [thread_with_five_turns(pg_engine, "alice", f"MT{i}") for i in range(2)]
    for thread_id in threads:
        assert queue.defer(
            SUMMARY_TASK, summary_job_key(thread_id, "alice"), {"owner": "alice", "thread_id": thread_id}
        )
    # an extraction whose job was lost entirely (a replica died before deferring): owed, found by the sweep
    lost = save_episodes(pg_engine, "carol", 1)

    first = start_worker(pg_database, calls, "--hold", "--concurrency", "3")
    try:
        wait_for(lambda: sum(1 for line in lines(calls) if line[0] == "start") >= 3)
        running = [
            j
            for owner in ("alice", "bob")
            for j in queue.jobs(memory_job_key(owner))
            if j["status"] == "running"
        ]
        assert running, "a memory job is running when the worker is killed"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    held = [line for line in lines(calls) if line[0] == "start"]
    assert not [line for line in lines(calls) if line[0] == "done"]  # the killed worker finished nothing

    second = start_worker(pg_database, calls)
    try:
        every = [i for ids in episodes.values() for i in ids] + lost
        wait_for(lambda: extraction_done(pg_engine, every), engine=pg_engine)
        wait_for(
            lambda: all(
                ReviewRepository(pg_engine, utc_now, owner_id="alice").thread_state(t).summary_up_to_turn == 5
                for t in threads
            )
        )
        wait_for(lambda: all(not queue.busy(memory_job_key(o)) for o in ("alice", "bob", "carol")))
    finally:
        stop(second)
    done = Counter((step, mark) for kind, step, mark, _ in lines(calls) if kind == "done")
    extractions = {mark: n for (step, mark), n in done.items() if step.startswith("extract")}
    summaries = {mark: n for (step, mark), n in done.items() if step == "summarize"}
    owners = {"alice": 3, "bob": 3}
    expected = {f"M{o}-{i}" for o, n in owners.items() for i in range(n)} | {"Mcarol-0"}
    assert extractions == dict.fromkeys(expected, 1)  # every owed extraction exactly once
    assert summaries == {"MT0": 1, "MT1": 1}  # every owed summary exactly once
    assert {line[2] for line in held} <= expected | {"MT0", "MT1"}
    with pg_engine.connect() as conn:
        finished = Counter(
            conn.execute(
                select(extraction_log.c.unit_id).where(extraction_log.c.step == FINISHED_STEP)
            ).scalars()
        )
    assert set(finished.values()) == {1}  # one finished job per episode, no doubled log rows


def test_two_workers_run_400_jobs_each_once_in_order_per_person(
    pg_engine: Engine, pg_database: str, tmp_path: Path, queue: EngineQueue
) -> None:
    calls = tmp_path / "calls.txt"
    owners = [f"p{i}" for i in range(8)]
    episodes = {owner: save_episodes(pg_engine, owner, 50) for owner in owners}
    for i in range(50):  # interleaved, as turns of eight people arrive
        for owner in owners:
            defer_episode(queue, owner, episodes[owner][i])
    workers = [start_worker(pg_database, calls, "--concurrency", "4") for _ in range(2)]
    try:
        every = [i for ids in episodes.values() for i in ids]
        # each job's end is logged after its extraction, in a later transaction: wait for both before stopping
        wait_for(
            lambda: extraction_done(pg_engine, every) and jobs_finished(pg_engine, every),
            timeout=600,
            engine=pg_engine,
        )
    finally:
        for proc in workers:
            stop(proc)
    done = [line for line in lines(calls) if line[0] == "done" and line[1].startswith("extract")]
    per_episode = Counter(line[2] for line in done)
    assert len(per_episode) == 400 and set(per_episode.values()) == {1}  # each once, 0 duplicates
    assert len({line[3] for line in done}) == 2  # both workers took jobs
    with pg_engine.connect() as conn:
        rows = conn.execute(
            select(units.c.owner_id, extraction_log.c.unit_id)
            .join(units, units.c.id == extraction_log.c.unit_id)
            .where(extraction_log.c.step == FINISHED_STEP)
            .order_by(extraction_log.c.id)
        ).all()
    for owner in owners:
        finished = [unit_id for who, unit_id in rows if who == owner]
        assert finished == episodes[owner]  # one person's jobs ran one at a time, in the order deferred
