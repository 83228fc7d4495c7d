"""Benchmark: a team on one store (issue #14 item 6, issue #15), on SQLite and on PostgreSQL.

1. Sessions saving turns: 20 sessions (2 processes, "replicas", x 10 threads) each save turns for 60 s
   through the repositories the flows use (a knowledge turn, a review rally, a memory episode with its
   keyword index, in turn). Turns per second, p50 / p95 save latency, errors (target 0), and rows lost
   (saves reported done but not in the database afterwards; target 0).
2. 400 saves of one knowledge entry from 3 processes x 6 threads: version numbers unique and contiguous.
3. Memory retrieval p50 / p95 at 10k units (the labelled queries): SQLite with embedded Chroma, PostgreSQL
   with a Chroma server.

PostgreSQL is a throwaway cluster (Debian's binaries, default durability: fsync and synchronous commit on)
and Chroma a `chroma run` on 127.0.0.1; without them those rows say why they were skipped. SQLite runs as
the app runs it (WAL, synchronous=NORMAL). Prints tables, asserts nothing.
Run: .venv/bin/python tests/bench/team.py [seconds] [sessions] [memory units]   (defaults: 60 20 10000)
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import Engine, func, select

from core.flows.memory.indexing import index_units
from core.flows.review_chat import ThreadState, load_sample_review
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import make_engine, open_store
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.knowledge.interviews import KnowledgeRepository, knowledge_turns
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import payload_episode, units
from core.store.review.repository import ReviewRepository, review_messages
from tests.bench.memory_retrieval import bulk_store, measure, pct
from tests.core.store_workers import start_together, wait_for_go
from tests.servers import ChromaServer, PgCluster, ServerUnavailable

REPLICAS = 2
KB_PROCESSES, KB_THREADS, KB_SAVES = 3, 6, 400
MEMORY_UNITS = 10_000
TURN = {
    "control": {"schema_version": "1.0", "mode": "interview"},
    "state": {"phase": "collect_case", "missing_info": []},
    "assistant_message": "承知しました。次に、損害賠償の上限について教えてください。",
    "knowledge_json": None,
}


def session(engine: Engine, seconds: float, tag: str) -> dict[str, Any]:
    """One person (id `tag`) saving turns until the time is up: knowledge turn, review rally, memory episode,
    in turn."""
    knowledge, review, memory = (
        KnowledgeRepository(engine, owner_id=tag),
        ReviewRepository(engine, owner_id=tag),
        MemoryRepository(engine, owner_id=tag),
    )
    interview = knowledge.create_interview(title=tag)
    thread = review.create_thread(review.ensure_sample(load_sample_review(), "bench"))
    saved = {"knowledge": 0, "review": 0, "memory": []}
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.time() + seconds
    turn = 0
    while time.time() < deadline:
        turn += 1
        start = time.perf_counter()
        try:
            if turn % 3 == 1:
                knowledge.record_turn(
                    interview, turn_no=turn, user_text=f"{tag} 第{turn}条の件です", turn=TURN
                )
                saved["knowledge"] += 1
            elif turn % 3 == 2:
                review.save_turn(thread, turn, f"§{turn} はどうですか", "段落の趣旨は…", ThreadState())
                saved["review"] += 1
            else:
                with memory.begin() as conn:
                    uid = memory.save_episode(
                        f"{tag}: 新宿でラーメンを食べた（{turn}）",
                        "いいですね！",
                        {},
                        source="bench",
                        conn=conn,
                    )
                    index_units(conn, None, [uid])
                saved["memory"].append(uid)
        except Exception as exc:  # noqa: BLE001 - every failure is counted: errors are a figure of the bench
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
        else:
            latencies.append((time.perf_counter() - start) * 1000)
    return {
        "interview": interview,
        "thread": thread,
        "saved": saved,
        "latencies": latencies,
        "errors": errors,
    }


def worker_main(argv: list[str]) -> None:
    """`python -m tests.bench.team sessions <url> <barrier> <seconds> <threads> <replica>`: one replica."""
    url, barrier, seconds, threads, replica = argv[1], Path(argv[2]), float(argv[3]), int(argv[4]), argv[5]
    engine = make_engine(url=url)
    results: list[dict[str, Any]] = []
    wait_for_go(barrier)
    workers = [
        threading.Thread(target=lambda t=t: results.append(session(engine, seconds, f"r{replica}s{t}")))
        for t in range(threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps({"sessions": results}))


def lost_rows(engine: Engine, sessions: list[dict[str, Any]]) -> int:
    """Saves reported done that the database does not have."""
    lost = 0
    with engine.connect() as conn:
        for s in sessions:
            turns = conn.execute(
                select(func.count()).where(knowledge_turns.c.interview_id == s["interview"])
            ).scalar_one()
            messages = conn.execute(
                select(func.count()).where(review_messages.c.thread_id == s["thread"])
            ).scalar_one()
            ids = s["saved"]["memory"]
            episodes = (
                conn.execute(
                    select(func.count())
                    .select_from(units.join(payload_episode, payload_episode.c.unit_id == units.c.id))
                    .where(units.c.id.in_(ids))
                ).scalar_one()
                if ids
                else 0
            )
            lost += max(0, s["saved"]["knowledge"] - turns) + max(0, s["saved"]["review"] * 2 - messages) // 2
            lost += max(0, len(ids) - episodes)
    return lost


def sessions_row(name: str, url: str, seconds: float, count: int) -> str:
    engine = open_store(url=url)
    results = start_together(
        url,
        REPLICAS,
        "sessions",
        str(seconds),
        str(count // REPLICAS),
        module="tests.bench.team",
        per_process=lambda i: [str(i + 1)],
        timeout=seconds + 600,
    )
    sessions = [s for r in results for s in r["sessions"]]
    latencies = [ms for s in sessions for ms in s["latencies"]]
    errors = [e for s in sessions for e in s["errors"]]
    lost = lost_rows(engine, sessions)
    engine.dispose()
    first_error = f"  ({errors[0]})" if errors else ""
    return (
        f"| {name} | {len(sessions)} | {len(latencies) / seconds:,.0f} | {pct(latencies, 0.5):.1f} | "
        f"{pct(latencies, 0.95):.1f} | {len(errors)} | {lost} |{first_error}"
    )


def versions_row(name: str, url: str) -> str:
    engine = open_store(url=url)
    base = KnowledgeBaseRepository(engine)
    entry_id = base.save_entry(dict.fromkeys(ENTRY_FIELDS, "同時保存"), by=LOCAL_PERSON)
    share = [
        KB_SAVES // KB_PROCESSES + (1 if i < KB_SAVES % KB_PROCESSES else 0) for i in range(KB_PROCESSES)
    ]
    start = time.perf_counter()
    results = start_together(
        url, KB_PROCESSES, "kb-save", str(entry_id), str(KB_THREADS), per_process=lambda i: [str(-share[i])]
    )
    elapsed = time.perf_counter() - start
    errors = sum(len(r["errors"]) for r in results)
    saved = sum(int(r["ok"]) for r in results)
    versions = [v["version"] for v in base.entry_versions(entry_id)]
    unique = len(set(versions))
    contiguous = versions == list(range(1, len(versions) + 1))
    engine.dispose()
    return (
        f"| {name} | {saved} | {errors} | {len(versions) - 1} | {unique} | {len(versions) - unique} | "
        f"{'yes' if contiguous else 'NO'} | {elapsed:.1f} |"
    )


def retrieval_row(name: str, engine: Engine, chroma: Any, size: int) -> str:
    repo, collection, key_ids, build_s = bulk_store(size, engine, chroma)
    times, recall, _, _ = measure(repo, collection, key_ids)
    return f"| {name} | {size:,} | {build_s:.0f} | {pct(times, 0.5):.1f} | {pct(times, 0.95):.1f} | {recall:.2f} |"


def main(argv: list[str]) -> None:
    seconds = float(argv[0]) if argv else 60.0
    count = int(argv[1]) if len(argv) > 1 else 20
    size = int(argv[2]) if len(argv) > 2 else MEMORY_UNITS
    tmp = Path(tempfile.mkdtemp(prefix="teambench"))
    engines = [("SQLite", f"sqlite:///{tmp / 'app.db'}")]
    cluster: PgCluster | None = None
    chroma: ChromaServer | None = None
    try:
        cluster = PgCluster(durable=True)  # fsync and synchronous commit on, as in production
        engines.append(("PostgreSQL", cluster.url(cluster.create_database())))
    except ServerUnavailable as exc:
        print(f"PostgreSQL skipped: {exc}")
    try:
        chroma = ChromaServer()
    except ServerUnavailable as exc:
        print(f"Chroma server skipped: {exc}")
    try:
        print(f"\n{count} sessions ({REPLICAS} processes) saving turns for {seconds:.0f} s")
        print(
            "| engine | sessions | turns/s | p50 ms | p95 ms | errors | rows lost |\n|---|---:|---:|---:|---:|---:|---:|"
        )
        for name, url in engines:
            print(sessions_row(name, url, seconds, count), flush=True)
        print(f"\n{KB_SAVES} saves of one knowledge entry, {KB_PROCESSES} processes x {KB_THREADS} threads")
        print(
            "| engine | saves | errors | new versions | distinct | duplicated | contiguous | s |\n"
            "|---|---:|---:|---:|---:|---:|---|---:|"
        )
        for name, url in engines:
            print(versions_row(name, url), flush=True)
        print("\nMemory retrieval, labelled queries (45), two passes")
        print("| store | units | build s | p50 ms | p95 ms | recall@5 |\n|---|---:|---:|---:|---:|---:|")
        sqlite_dir = Path(tempfile.mkdtemp(prefix="teambench-mem"))
        print(
            retrieval_row("SQLite + embedded Chroma", open_store(sqlite_dir), open_chroma(sqlite_dir), size),
            flush=True,
        )
        if cluster is not None:
            pg = open_store(url=cluster.url(cluster.create_database()))
            client = open_chroma(host=chroma.host, port=chroma.port) if chroma else open_chroma(tmp / "pg")
            label = "PostgreSQL + Chroma server" if chroma else "PostgreSQL + embedded Chroma"
            print(retrieval_row(label, pg, client, size), flush=True)
    finally:
        if chroma is not None:
            chroma.stop()
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["sessions"]:
        worker_main(sys.argv[1:])
    else:
        main(sys.argv[1:])
