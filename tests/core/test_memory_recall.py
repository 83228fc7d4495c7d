"""Retrieval quality on the labelled Japanese set (issue 5): recall@5 ≥ 0.8 and ≥ 0.3 above unicode61 alone."""

from __future__ import annotations

from pathlib import Path

from core.flows.memory.evaluation import build_eval_store, evaluate, load_eval_set
from core.flows.memory.stores import memory_collection
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.repository import MemoryRepository

NOW = 1_795_000_000


def test_eval_set_size() -> None:
    data = load_eval_set()
    assert len(data["queries"]) >= 40
    assert len(data["episodes"]) + data["distractor_count"] >= 300


def test_recall_at_5_beats_unicode61(tmp_path: Path) -> None:
    repo = MemoryRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id)
    collection = memory_collection(open_chroma(tmp_path), LOCAL_PERSON)
    key_ids = build_eval_store(repo, collection, demo_client(), NOW)
    result = evaluate(repo, collection, key_ids, NOW)
    assert result.recall >= 0.8, result.misses
    assert result.recall - result.baseline_recall >= 0.3
