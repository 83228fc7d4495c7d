"""Benchmark of Japanese spelling variants (issue 12 item 2): recall@5 of memory retrieval and of the
knowledge-base search, before and after the Sudachi lexical keys, and the latency at 10k units.

Run: .venv/bin/python tests/bench/japanese_retrieval.py [memory sizes...]   (default: 1000 10000)
The labelled set is tests/data/japanese_variants.json: each query names its memory or entry in another
spelling (hiragana/kanji, okurigana, katakana/alphabet, width, honorifics). "Before" is retrieval without
the lexical lane, and the knowledge-base search as it was (one LIKE of the whole input over every field).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import insert, or_, select

from core.flows.memory.constants import DAY
from core.flows.memory.indexing import index_units
from core.flows.memory.retrieval import retrieve
from core.flows.memory.sample_data import generate_conversation
from core.flows.memory.stores import memory_collection, memory_repository
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository, knowledge_entries
from core.store.memory.tables import payload_episode, units

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_795_000_000
DATA = json.loads((ROOT / "tests/data/japanese_variants.json").read_text(encoding="utf-8"))
KB_DISTRACTORS = 2000
TOPICS = (
    ("競業避止", "退職後の競業避止義務の期間"),
    ("知的財産権", "成果物の著作権の帰属"),
    ("反社会的勢力の排除", "表明保証と無催告解除"),
    ("契約解除", "催告解除の期間"),
    ("準拠法・管轄", "管轄裁判所の指定"),
    ("不可抗力", "不可抗力による履行遅滞の免責"),
    ("個人情報", "個人情報の取扱いと委託先の監督"),
    ("監査", "監査権の範囲と頻度"),
    ("損害賠償", "間接損害の除外"),
    ("支払条件", "支払期日と遅延損害金"),
)
CONTRACTS = ("業務委託契約", "売買契約", "秘密保持契約（NDA）", "ライセンス契約", "賃貸借契約")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def memory_store(size: int) -> tuple[Any, Any, dict[str, int]]:
    """`size` episodes: the labelled ones among seeded distractors, indexed as the flow indexes them."""
    episodes = DATA["memory"]["episodes"]
    tmp = Path(tempfile.mkdtemp(prefix="jpbench"))
    repo = memory_repository(open_store(tmp), LOCAL_PERSON)
    collection = memory_collection(open_chroma(tmp), LOCAL_PERSON)
    distractors = generate_conversation(NOW, size - len(episodes), seed=11, days=365)
    rows = [(ex.occurred_at, ex.input_text, ex.reply_text) for ex in distractors]
    rows += [(NOW - e["days_ago"] * DAY - 3600, e["input"], e["reply"]) for e in episodes]
    common = {"kind": "EPISODE", "state": "active", "confidence": 0.7, "salience": 0.5, "sensitivity": 0}
    common |= {"pin": 0, "topic_tags": "[]", "extract_state": "done", "extract_attempts": 1}
    common |= {"owner_id": LOCAL_PERSON.id}
    with repo.begin() as conn:
        conn.execute(
            insert(units),
            [
                {"id": i + 1, "occurred_at": ts, "created_at": ts, "updated_at": ts, **common}
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
                    "extraction_json": "{}",
                }
                for i, (_, a, b) in enumerate(rows)
            ],
        )
        ids = list(range(1, len(rows) + 1))
        for s in range(0, len(ids), 5000):
            index_units(conn, collection, ids[s : s + 5000], batch=2000)
    keys = {e["key"]: len(distractors) + i + 1 for i, e in enumerate(episodes)}
    return repo, collection, keys


def memory_recall(
    repo: Any, collection: Any, keys: dict[str, int], *, lexical: bool
) -> tuple[float, list[float]]:
    queries = DATA["memory"]["queries"]
    for _ in range(2):  # warm-up pass + measured pass
        hits, times = 0, []
        for q in queries:
            relevant = {keys[k] for k in q["relevant"]}
            start = time.perf_counter()
            result = retrieve(repo, collection, [], q["query"], NOW, lexical=lexical)
            times.append((time.perf_counter() - start) * 1000)
            hits += bool(relevant & {c.unit_id for c in result.selected[:5]})
    return hits / len(queries), times


def kb_store() -> tuple[KnowledgeBaseRepository, dict[str, int]]:
    """The labelled entries first (the oldest), then seeded distractors on other clause topics."""
    tmp = Path(tempfile.mkdtemp(prefix="jpkb"))
    clock = iter(range(1, 10**9))
    repo = KnowledgeBaseRepository(open_store(tmp), lambda: next(clock))
    keys = {e["key"]: repo.save_entry(e, by=LOCAL_PERSON) for e in DATA["knowledge"]["entries"]}
    rng = random.Random(7)
    for n in range(KB_DISTRACTORS):
        topic, point = rng.choice(TOPICS)
        repo.save_entry(
            {
                "contract_type": rng.choice(CONTRACTS),
                "knowledge_title": f"{topic}の確認（{n}）",
                "target_clause": f"第{rng.randint(1, 30)}条（{topic}）",
                "review_points": f"{point}が相手方に有利すぎないか。",
                "action_plan": f"{topic}の条項について修正案を出す。",
                "clause_sample": f"{topic}に関する定めは別紙のとおりとする。",
            },
            by=LOCAL_PERSON,
        )
    return repo, keys


def like_search(repo: KnowledgeBaseRepository, search: str) -> list[int]:
    """The knowledge-base search before issue 12: one LIKE of the whole input over every field."""
    pattern = f"%{search.strip()}%"
    query = (
        select(knowledge_entries.c.id)
        .where(or_(*(knowledge_entries.c[name].like(pattern) for name in ENTRY_FIELDS)))
        .order_by(knowledge_entries.c.updated_at.desc(), knowledge_entries.c.id.desc())
    )
    with repo.engine.connect() as conn:
        return [int(r[0]) for r in conn.execute(query)]


def kb_recall(search: Callable[[str], list[int]], keys: dict[str, int]) -> tuple[float, list[float]]:
    queries = DATA["knowledge"]["queries"]
    hits, times = 0, []
    for q in queries:
        start = time.perf_counter()
        found = search(q["query"])
        times.append((time.perf_counter() - start) * 1000)
        hits += bool({keys[k] for k in q["relevant"]} & set(found[:5]))
    return hits / len(queries), times


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10_000]
    n = len(DATA["memory"]["queries"])
    print(f"memory retrieval, {n} variant queries (recall@5 of the injected memories)")
    print(
        f"{'units':>7} | {'before recall@5':>15} {'p50 ms':>7} | {'after recall@5':>14} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for size in sizes:
        repo, collection, keys = memory_store(size)
        before, before_t = memory_recall(repo, collection, keys, lexical=False)
        after, after_t = memory_recall(repo, collection, keys, lexical=True)
        print(
            f"{size:>7} | {before:>15.2f} {pct(before_t, 0.5):>7.1f} | {after:>14.2f} "
            f"{pct(after_t, 0.5):>7.1f} {pct(after_t, 0.95):>7.1f}",
            flush=True,
        )
    repo_kb, kb_keys = kb_store()
    entries = len(DATA["knowledge"]["entries"]) + KB_DISTRACTORS
    before, before_t = kb_recall(lambda s: like_search(repo_kb, s), kb_keys)
    after, after_t = kb_recall(lambda s: [e["id"] for e in repo_kb.list_entries(search=s)], kb_keys)
    print(
        f"\nknowledge-base search, {len(DATA['knowledge']['queries'])} variant queries over {entries} entries"
    )
    print(f"{'':>7} | {'recall@5':>8} {'p50 ms':>7}")
    print(f"{'before':>7} | {before:>8.2f} {statistics.median(before_t):>7.1f}")
    print(f"{'after':>7} | {after:>8.2f} {statistics.median(after_t):>7.1f}")


if __name__ == "__main__":
    main()
