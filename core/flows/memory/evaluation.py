"""Recall@k of retrieval on the labelled Japanese set, beside the unicode61 lane."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.flows.memory.constants import DAY
from core.flows.memory.lanes import unicode61_lane
from core.flows.memory.retrieval import retrieve
from core.flows.memory.sample_data import SAMPLES, Exchange, generate_conversation, load_exchanges
from core.llm.base import LLMClient
from core.store.memory.keyword_lanes import ensure_unicode61_baseline
from core.store.memory.repository import MemoryRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection


def load_eval_set() -> dict[str, Any]:
    eval_set: dict[str, Any] = json.loads((SAMPLES / "retrieval_eval.json").read_text(encoding="utf-8"))
    return eval_set


def build_eval_store(
    repo: MemoryRepository, collection: Collection | None, client: LLMClient, now: int
) -> dict[str, int]:
    """Load distractors and key episodes through the pipeline; returns key -> episode unit id."""
    data = load_eval_set()
    distractors = generate_conversation(now, data["distractor_count"], seed=data["distractor_seed"])
    keys = [Exchange(now - e["days_ago"] * DAY - 3600, e["input"], e["reply"]) for e in data["episodes"]]
    ids = load_exchanges(repo, collection, client, distractors + keys)
    with repo.begin() as conn:
        ensure_unicode61_baseline(conn)
    return {e["key"]: uid for e, uid in zip(data["episodes"], ids[len(distractors) :], strict=True)}


@dataclass
class EvalResult:
    queries: int
    recall: float
    baseline_recall: float
    p50_ms: float
    p95_ms: float
    misses: list[str]


def evaluate(
    repo: MemoryRepository, collection: Collection | None, key_ids: dict[str, int], now: int, k: int = 5
) -> EvalResult:
    """Recall@k of the injected memories (retrieval pack) and of the unicode61 keyword lane alone."""
    data = load_eval_set()
    hits = base_hits = 0
    times, misses = [], []
    for q in data["queries"]:
        relevant = {key_ids[key] for key in q["relevant"]}
        start = time.perf_counter()
        result = retrieve(repo, collection, [], q["query"], now)
        times.append((time.perf_counter() - start) * 1000)
        got = [c.unit_id for c in result.selected][:k]
        if relevant & set(got):
            hits += 1
        else:
            misses.append(q["query"])
        with repo.connect() as conn:
            baseline = [uid for uid, _ in unicode61_lane(conn, repo.owner_id, q["query"], k)]
        base_hits += bool(relevant & set(baseline))
    times.sort()
    n = len(data["queries"])
    return EvalResult(
        n, hits / n, base_hits / n, times[len(times) // 2], times[int(len(times) * 0.95) - 1], misses
    )
