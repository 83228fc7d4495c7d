"""The job engine on PostgreSQL (procrastinate, core/jobs/engine.py): throughput, queue latency, draining
owed work. Prints one table; never asserts.

- jobs/s: N trivial jobs over 20 keys (a lock each), deferred up front, run by one worker (concurrency 4) in
  this process: the engine's own cost per job (fetch, lock, finish, our status row).
- latency: a job deferred every 50 ms to an idle worker; from defer to the task's first line (the worker
  wakes on LISTEN/NOTIFY), p50 / p95.
- drain: 1,000 episodes of 10 people left pending with no job at all (as after a crash that lost the
  queue); a worker starts, its sweep finds them and runs the real memory task with the demo model (fast,
  offline); seconds until every one is extracted.

A throwaway durable PostgreSQL cluster on 127.0.0.1 (tests/servers.py). Run:
  .venv/bin/python tests/bench/jobs.py [--jobs 2000] [--owed 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sqlalchemy import Engine, func, select  # noqa: E402

from core.clock import utc_now  # noqa: E402
from core.flows.registry import demo_client  # noqa: E402
from core.jobs.engine import EngineQueue  # noqa: E402
from core.jobs.tasks import JobContext, Task, TaskRegistry  # noqa: E402
from core.services import task_registry  # noqa: E402
from core.store import init_db, make_engine  # noqa: E402
from core.store.memory.repository import MemoryRepository  # noqa: E402
from core.store.memory.tables import units  # noqa: E402
from tests.servers import PgCluster  # noqa: E402

REFLECTION = {"reflection_text": "", "salience": 0.5, "confidence": 0.5, "topic_tags": []}
started: dict[int, float] = {}
lock = threading.Lock()


def note_start(_ctx: JobContext, args: dict[str, Any]) -> str:
    with lock:
        started[int(args["n"])] = time.time()
    return ""


NOOP = Task("bench.noop", "bench", "ベンチ", note_start)


def fresh(cluster: PgCluster) -> Engine:
    engine = make_engine(url=cluster.url(cluster.create_database()))
    init_db(engine)
    return engine


def worker(engine: Engine, registry: TaskRegistry, sweep: float = 3600.0) -> EngineQueue:
    client = demo_client()
    queue = EngineQueue(
        engine, registry, lambda: JobContext(engine, client), concurrency=4, sweep_every=sweep, poll=1.0
    )
    return queue


def wait_until(check: Any, timeout: float = 900.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(0.05)


def throughput(cluster: PgCluster, n: int) -> tuple[float, float]:
    engine = fresh(cluster)
    registry = TaskRegistry()
    registry.add(NOOP)
    queue = worker(engine, registry)
    started.clear()
    t0 = time.perf_counter()
    for i in range(n):
        queue.defer(NOOP, (f"k{i % 20}", "bench"), {"n": i})
    deferred = time.perf_counter() - t0
    t1 = time.perf_counter()
    queue.start_worker()
    wait_until(lambda: len(started) == n)
    ran = time.perf_counter() - t1
    queue.close()
    return n / deferred, n / ran


def latency(cluster: PgCluster, n: int = 200) -> tuple[float, float]:
    engine = fresh(cluster)
    registry = TaskRegistry()
    registry.add(NOOP)
    queue = worker(engine, registry)
    queue.start_worker()
    queue.started.wait(30)
    time.sleep(1.0)
    started.clear()
    deferred_at: dict[int, float] = {}
    for i in range(n):
        deferred_at[i] = time.time()
        queue.defer(NOOP, (f"k{i % 20}", "bench"), {"n": i})
        time.sleep(0.05)
    wait_until(lambda: len(started) == n)
    queue.close()
    waits = sorted((started[i] - deferred_at[i]) * 1000 for i in range(n))
    return statistics.median(waits), waits[int(0.95 * (n - 1))]


def drain(cluster: PgCluster, owed: int) -> float:
    engine = fresh(cluster)
    for p in range(10):
        repo = MemoryRepository(engine, utc_now, owner_id=f"p{p}")
        for i in range(owed // 10):
            repo.save_episode(
                f"{p}-{i}: 同僚の田中さんと新宿でラーメンを食べた。",
                "いいですね。",
                REFLECTION,
                source="trailer",
            )

    def left() -> int:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count()).where(units.c.extract_state != "done", units.c.kind == "EPISODE")
                ).scalar_one()
            )

    queue = worker(engine, task_registry(), sweep=5.0)
    t0 = time.perf_counter()
    queue.start_worker()
    wait_until(lambda: left() == 0, timeout=3600)
    seconds = time.perf_counter() - t0
    queue.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--owed", type=int, default=1000)
    args = parser.parse_args()
    cluster = PgCluster(durable=True)
    try:
        defer_rate, run_rate = throughput(cluster, args.jobs)
        p50, p95 = latency(cluster)
        drained = drain(cluster, args.owed)
    finally:
        cluster.stop()
    print("| measure | value |")
    print("|---|---|")
    print(f"| defer, jobs/s (one INSERT each, one thread) | {defer_rate:.0f} |")
    print(f"| run, jobs/s ({args.jobs} trivial jobs, 20 keys, 1 worker × 4) | {run_rate:.0f} |")
    print(f"| queue latency defer → start, p50 / p95 (ms) | {p50:.0f} / {p95:.0f} |")
    print(
        f"| drain {args.owed} owed extractions (10 people, demo model), s | {drained:.1f} ({args.owed / drained:.1f}/s) |"
    )


if __name__ == "__main__":
    main()
