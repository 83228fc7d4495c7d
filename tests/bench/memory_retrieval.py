"""Benchmark of memory retrieval (issue 5): p50/p95 latency and recall@5 at 1k / 10k / 100k units,
beside the FTS5 unicode61 keyword lane; plus extraction + storage time of one episode without LLM time.

Run: .venv/bin/python tests/bench/memory_retrieval.py [sizes...]   (default: 1000 10000 100000)
Units are synthetic and seeded: the labelled set's 45 key episodes among template-generated episodes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import insert, text

from core.flows.memory.constants import DAY
from core.flows.memory.evaluation import load_eval_set
from core.flows.memory.extraction import apply_extraction, call_extractors
from core.flows.memory.indexing import index_units
from core.flows.memory.lanes import unicode61_lane
from core.flows.memory.retrieval import retrieve
from core.flows.memory.sample_data import generate_conversation
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.keyword_lanes import ensure_unicode61_baseline
from core.store.memory.tables import payload_episode, units

NOW = 1_795_000_000


def bulk_store(size: int, engine=None, chroma=None, episodes=None, embedder=None):  # type: ignore[no-untyped-def]
    """A store with `size` episodes (labelled keys among seeded distractors), indexed in batches; on a
    temporary SQLite store and embedded Chroma unless an engine and a Chroma client are given. `episodes`:
    the keys ({key, days_ago, input, reply}; default: the labelled set's 45), `embedder`: the collection's."""
    data = {"episodes": episodes} if episodes is not None else load_eval_set()
    tmp = Path(tempfile.mkdtemp(prefix="membench"))
    repo = memory_repository(engine if engine is not None else open_store(tmp), LOCAL_PERSON)
    collection = memory_collection(chroma if chroma is not None else open_chroma(tmp), LOCAL_PERSON, embedder)
    distractors = generate_conversation(NOW, size - len(data["episodes"]), seed=11, days=365)
    rows = [(ex.occurred_at, ex.input_text, ex.reply_text) for ex in distractors]
    rows += [(NOW - e["days_ago"] * DAY - 3600, e["input"], e["reply"]) for e in data["episodes"]]
    start = time.perf_counter()
    with repo.begin() as conn:
        conn.execute(
            insert(units),
            [
                {
                    "id": i + 1,
                    "kind": "EPISODE",
                    "occurred_at": ts,
                    "created_at": ts,
                    "updated_at": ts,
                    "state": "active",
                    "confidence": 0.7,
                    "salience": 0.5,
                    "sensitivity": 0,
                    "owner_id": LOCAL_PERSON.id,
                    "pin": 0,
                    "topic_tags": "[]",
                    "persona_affect_label": "neutral",
                    "persona_affect_intensity": 0.2,
                    "extract_state": "done",
                    "extract_attempts": 1,
                }
                for i, (ts, _, _) in enumerate(rows)
            ],
        )
        conn.execute(
            insert(payload_episode),
            [
                {
                    "unit_id": i + 1,
                    "input_text": a,
                    "reply_text": b,
                    "reflection_json": "{}",
                    "reflection_source": "bench",
                    "extraction_json": "{}",
                }
                for i, (_, a, b) in enumerate(rows)
            ],
        )
        if conn.dialect.name == "postgresql":  # explicit ids leave the sequence behind
            conn.execute(
                text("SELECT setval(pg_get_serial_sequence('memory_units', 'id'), :n)"), {"n": len(rows)}
            )
        ids = list(range(1, len(rows) + 1))
        for s in range(0, len(ids), 5000):
            index_units(conn, collection, ids[s : s + 5000], batch=2000)
        ensure_unicode61_baseline(conn)
    if repo.engine.dialect.name == "postgresql":  # what autovacuum does after a bulk load: fresh statistics
        with repo.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
    build_s = time.perf_counter() - start
    key_ids = {e["key"]: len(distractors) + i + 1 for i, e in enumerate(data["episodes"])}
    return repo, collection, key_ids, build_s


def measure(repo, collection, key_ids):  # type: ignore[no-untyped-def]
    data = load_eval_set()
    times, base_times, hits, base_hits = [], [], 0, 0
    for _ in range(2):  # warm-up pass + measured pass
        times, base_times, hits, base_hits = [], [], 0, 0
        for q in data["queries"]:
            relevant = {key_ids[k] for k in q["relevant"]}
            t = time.perf_counter()
            result = retrieve(repo, collection, [], q["query"], NOW)
            times.append((time.perf_counter() - t) * 1000)
            hits += bool(relevant & {c.unit_id for c in result.selected[:5]})
            t = time.perf_counter()
            with repo.connect() as conn:
                base = {u for u, _ in unicode61_lane(conn, LOCAL_PERSON.id, q["query"], 5)}
            base_times.append((time.perf_counter() - t) * 1000)
            base_hits += bool(relevant & base)
    n = len(data["queries"])
    return times, hits / n, base_times, base_hits / n


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def episode_cost(repo, collection) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Median ms of save + index + extraction storage for one episode, LLM (demo) time excluded."""
    client, costs, llm = demo_client(), [], []
    for i, ex in enumerate(generate_conversation(NOW, 30, seed=99)):
        t = time.perf_counter()
        results = call_extractors(client, ex.input_text, ex.reply_text, ex.occurred_at, NOW)
        llm.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        with repo.begin() as conn:
            uid = repo.save_episode(
                ex.input_text,
                ex.reply_text,
                {"salience": 0.5, "confidence": 0.5},
                source="bench",
                occurred_at=NOW + i,
                now=NOW + i,
                conn=conn,
            )
            index_units(conn, collection, [uid])
        apply_extraction(repo, collection, uid, NOW + i, results, NOW + i)
        costs.append((time.perf_counter() - t) * 1000)
    return statistics.median(costs), statistics.median(llm)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10_000, 100_000]
    print(
        f"{'units':>8} {'build s':>8} {'p50 ms':>7} {'p95 ms':>7} {'recall@5':>8} | "
        f"{'u61 p50':>7} {'u61 recall@5':>12} | {'episode ms':>10}"
    )
    for size in sizes:
        repo, collection, key_ids, build_s = bulk_store(size)
        times, recall, base_times, base_recall = measure(repo, collection, key_ids)
        cost, _ = episode_cost(repo, collection)
        print(
            f"{size:>8} {build_s:>8.1f} {pct(times, 0.5):>7.1f} {pct(times, 0.95):>7.1f} {recall:>8.2f} | "
            f"{pct(base_times, 0.5):>7.2f} {base_recall:>12.2f} | {cost:>10.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
