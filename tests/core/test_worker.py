"""The background worker: per-key order, parallel keys, bounded queue, failures recorded, wait."""

from __future__ import annotations

import threading
import time

import pytest

from core.debuglog import trace
from core.jobs.worker import BackgroundWorker, JobFailed
from tests.conftest import background_threads


@pytest.fixture
def worker():
    w = BackgroundWorker(threads=2, max_queued=4)
    yield w
    w.close()


def test_jobs_of_one_key_run_in_order_one_at_a_time(worker: BackgroundWorker) -> None:
    seen: list[str] = []
    running = threading.Lock()

    def job(name: str):
        def run() -> str:
            assert running.acquire(blocking=False), "two jobs of one key ran at once"
            time.sleep(0.02)
            seen.append(name)
            running.release()
            return f"{name}完了"

        return run

    for name in ("a", "b", "c"):
        assert worker.submit(("p1", "c1"), "extract", name, job(name)) is not None
    assert worker.wait(("p1", "c1"), timeout=5)
    assert seen == ["a", "b", "c"]
    assert [(j["label"], j["status"], j["message"]) for j in worker.jobs(("p1", "c1"))] == [
        ("a", "done", "a完了"),
        ("b", "done", "b完了"),
        ("c", "done", "c完了"),
    ]


def test_different_keys_run_in_parallel(worker: BackgroundWorker) -> None:
    both = threading.Barrier(2, timeout=5)
    worker.submit("k1", "x", "1", lambda: str(both.wait()))
    worker.submit("k2", "x", "2", lambda: str(both.wait()))
    assert worker.wait("k1", timeout=5) and worker.wait("k2", timeout=5)
    assert {j["status"] for j in worker.jobs("k1") + worker.jobs("k2")} == {"done"}


def test_a_full_queue_refuses_and_failures_are_recorded_in_japanese() -> None:
    gate = threading.Event()
    worker = BackgroundWorker(threads=1, max_queued=2)
    try:
        worker.submit("k", "x", "blocker", lambda: str(gate.wait(5)))
        time.sleep(0.05)  # the blocker is running, the queue is empty again
        assert worker.submit("k", "x", "q1", lambda: "") is not None
        assert worker.submit("k", "x", "q2", lambda: "") is not None
        assert worker.submit("k", "x", "q3", lambda: "") is None  # bounded
        assert worker.busy("k") and not worker.wait("k", timeout=0.05)
        gate.set()
        assert worker.wait("k", timeout=5)

        def fails() -> str:
            raise JobFailed("抽出に失敗しました（LLMの出力が空でした）。")

        def crashes() -> str:
            raise RuntimeError("secret detail")

        worker.submit("k2", "x", "f", fails)
        worker.submit("k2", "x", "c", crashes)
        assert worker.wait("k2", timeout=5)
        assert [(j["status"], j["message"]) for j in worker.jobs("k2")] == [
            ("failed", "抽出に失敗しました（LLMの出力が空でした）。"),
            ("failed", "予期しないエラーで失敗しました（RuntimeError）。"),
        ]
        assert not worker.busy("k2")
    finally:
        worker.close()


def test_wait_by_kind_ignores_other_kinds(worker: BackgroundWorker) -> None:
    gate = threading.Event()
    worker.submit("k", "extract", "slow", lambda: str(gate.wait(5)))
    assert worker.wait("k", kind="summary", timeout=0.1)
    assert not worker.wait("k", kind="extract", timeout=0.05)
    gate.set()
    assert worker.wait("k", kind="extract", timeout=5)


def test_a_closed_worker_refuses_jobs() -> None:
    worker = BackgroundWorker(threads=1)
    worker.close()
    assert worker.submit("k", "x", "late", lambda: "") is None


def test_a_job_runs_in_a_copy_of_the_submitters_context(worker: BackgroundWorker) -> None:
    seen: list[tuple[str, str, int]] = []

    def run() -> str:
        now = trace.current()
        seen.append((now.conversation_id, now.parent_id, now.turn))
        with trace.bind(conversation_id="changed-in-the-job"):
            pass
        return ""

    with trace.bind(flow="review", conversation_id="thread-1", turn=5), trace.child_of("call-abc"):
        worker.submit("k", "summary", "要約", run)
    worker.submit("k", "summary", "要約", run)  # submitted outside any binding
    assert worker.wait("k", timeout=5)
    assert seen == [("thread-1", "call-abc", 5), ("", "", 0)]
    assert trace.current() == trace.Trace()  # the submitter's context is untouched


def test_the_suites_guard_sees_a_workers_threads_until_it_is_closed() -> None:
    """tests/conftest.py's no_worker_outlives_its_test fails a test that leaves threads of a BackgroundWorker
    running: its helper finds them (the default name and a name= prefix alike), and none once closed."""
    before = background_threads()
    default, named = BackgroundWorker(threads=2), BackgroundWorker(threads=1, name="katachi-worker-guard")
    try:
        opened = background_threads() - before
        assert sorted(t.name for t in opened) == [
            "katachi-worker-0",
            "katachi-worker-1",
            "katachi-worker-guard-0",
        ]
        assert all(t.is_alive() for t in opened)
        default.close()
        assert sorted(t.name for t in background_threads() - before) == ["katachi-worker-guard-0"]
    finally:
        default.close()
        named.close()
    assert background_threads() - before == set()
    assert not any(t.is_alive() for t in opened)


def test_stopped_sweeps_read_their_database_no_more_and_the_worker_runs_on(
    worker: BackgroundWorker, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import create_engine  # noqa: PLC0415 - only this test needs an engine

    from core.jobs.tasks import JobContext, OwedJob, Task, TaskRegistry  # noqa: PLC0415

    ran: list[int] = []
    task = Task("count", "count", "数える", lambda _ctx, args: str(ran.append(args["n"])))
    reads: list[str] = []

    def finder(name: str):
        def owed(_engine):  # type: ignore[no-untyped-def]
            reads.append(name)
            return [OwedJob(task, name, {"n": len(reads)})]

        return owed

    engines = {name: create_engine(f"sqlite:///{tmp_path / name}.db") for name in ("a", "b")}
    try:
        for name, engine in engines.items():
            registry = TaskRegistry()
            registry.add(task)
            registry.owe(finder(name))
            worker.start_sweep(engine, registry, lambda engine=engine: JobContext(engine, None), every=0.05)  # type: ignore[misc,arg-type]
        deadline = time.monotonic() + 5
        while {"a", "b"} - set(reads) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert {"a", "b"} <= set(reads)
        assert worker.stop_sweeps() == 2
        assert not [t for t in threading.enumerate() if t.name == "katachi-sweep" and t.is_alive()]
        assert worker.wait_idle(timeout=5)
        read_then = len(reads)
        time.sleep(0.2)  # four sweep periods: nothing reads either database now
        assert len(reads) == read_then and worker.stop_sweeps() == 0
        assert worker.submit("k", "x", "後の仕事", lambda: "済み") is not None  # the worker itself runs on
        assert worker.wait_idle(timeout=5) and worker.jobs("k")[-1]["status"] == "done"
    finally:
        for engine in engines.values():
            engine.dispose()


def test_wait_idle_waits_for_every_key_and_times_out_on_a_blocked_job(worker: BackgroundWorker) -> None:
    gate = threading.Event()
    worker.submit("k1", "x", "待つ", lambda: str(gate.wait(5)))
    worker.submit("k2", "x", "すぐ", lambda: "済み")
    assert not worker.wait_idle(timeout=0.2)
    assert worker.jobs("k2")[-1]["status"] == "done"
    gate.set()
    assert worker.wait_idle(timeout=5)
