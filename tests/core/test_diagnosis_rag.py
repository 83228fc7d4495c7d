"""spec 04 §10 RAG over the sample manuals (temp-dir Chroma): vehicle isolation, threshold, indexing."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from core.flows.diagnosis.catalog import load_manual, load_vehicles
from core.flows.diagnosis.constants import RAG_SCORE_THRESHOLD
from core.flows.diagnosis.rag import RAGService, build_rag_messages
from core.llm.replay import ReplayClient
from core.search.vectors import open_chroma
from core.text.romaji import kana_reading


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> RAGService:
    service = RAGService(open_chroma(tmp_path_factory.mktemp("chroma")))
    service.index_manuals()
    return service


def test_manuals_have_at_least_60_japanese_chunks_each() -> None:
    vehicles = load_vehicles()
    assert len(vehicles) >= 3
    for v in vehicles:
        chunks = load_manual(v.vehicle_id)
        assert len(chunks) >= 60
        assert all(c["vehicle_id"] == v.vehicle_id for c in chunks)
        assert {c["content_type"] for c in chunks} == {
            "procedure",
            "specification",
            "general",
            "warning",
            "danger",
        }
        assert all(any("\u3040" <= ch <= "\u30ff" for ch in c["text"]) for c in chunks)


def test_manuals_are_generated_deterministically() -> None:
    here = Path(__file__).resolve().parents[2] / "core" / "samples" / "diagnosis"
    sys.path.insert(0, str(here))
    try:
        spec = importlib.util.spec_from_file_location("build_manuals", here / "build_manuals.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    finally:
        sys.path.remove(str(here))
    for vehicle in module.VEHICLES:
        stored = json.loads((here / "manuals" / f"{vehicle['vehicle_id']}.json").read_text(encoding="utf-8"))
        assert module.build_manual(vehicle) == stored


def test_vehicle_filter_isolation(rag: RAGService) -> None:
    for v in load_vehicles():
        for query in ("ブレーキが効かない", "エンジン警告灯が点灯した", "充電できない", "タイヤの空気圧"):
            for hit in rag.search(query, v.vehicle_id):
                assert hit["vehicle_id"] == v.vehicle_id and hit["chunk_id"].startswith(v.vehicle_id)
    assert rag.search("エンジンオイルの交換時期", "asahi-lumina-2023") == [] or all(
        "エンジンオイル" not in h["section"]
        for h in rag.search("エンジンオイルの交換時期", "asahi-lumina-2023")
    )
    assert rag.search("ブレーキ", "no-such-vehicle") == []


def test_threshold_and_limit(rag: RAGService) -> None:
    hits = rag.search("ブレーキを踏むとキーキー音がする", "minato-soleil-2022")
    assert 1 <= len(hits) <= 5
    assert all(h["score"] > RAG_SCORE_THRESHOLD for h in hits)
    assert hits == sorted(hits, key=lambda h: -h["score"])
    assert hits[0]["section"] == "ブレーキ時にキーキー音がする" and hits[0]["has_warning"]
    assert rag.search("新宿でラーメンを食べた", "minato-soleil-2022") == []
    raw = rag.collection.query(
        query_texts=["新宿でラーメンを食べた"], n_results=5, where={"vehicle_id": "minato-soleil-2022"}
    )
    assert len(raw["ids"][0]) == 5  # Chroma returned chunks; the threshold removed them all


def test_index_is_idempotent_and_reindexable(rag: RAGService) -> None:
    total = sum(len(load_manual(v.vehicle_id)) for v in load_vehicles())
    assert rag.is_indexed() and rag.index_manuals() == total
    seen: list[int] = []
    assert rag.reindex(lambda done, all_, label: seen.append(done)) == total
    assert seen[-1] == total and rag.chunk_count() == total  # chunks (each has a vector per sentence too)
    metas = rag.collection.get(include=["metadatas"])["metadatas"]
    whole = {m["chunk_id"]: m for m in metas}.values()
    assert Counter(m["vehicle_id"] for m in whole) == Counter(
        {v.vehicle_id: len(load_manual(v.vehicle_id)) for v in load_vehicles()}
    )


def test_query_uses_rag_or_no_rag_prompt(rag: RAGService) -> None:
    client = ReplayClient(["要約", "一般論"])
    answer = rag.query(
        "ブレーキを踏むとキーキー音がする",
        "minato-soleil-2022",
        "ミナト自動車",
        "ソレイユ",
        2022,
        client=client,
    )
    assert answer.answer == "要約" and answer.sources
    assert client.requests[0].messages == build_rag_messages(
        "ブレーキを踏むとキーキー音がする", answer.sources, "ミナト自動車", "ソレイユ", 2022
    )
    assert "取扱説明書の関連箇所" in client.requests[0].messages[1]["content"]
    none = rag.query("新宿でラーメン", "minato-soleil-2022", "ミナト自動車", "ソレイユ", 2022, client=client)
    assert (
        none.sources == []
        and "該当する記載が見つかりませんでした" in client.requests[1].messages[1]["content"]
    )
    assert client.requests[1].tags == {"flow": "diagnosis", "step": "rag_answer"}


def test_a_symptom_typed_in_romaji_is_searched_as_read_in_kana(rag: RAGService) -> None:
    romaji = "bureeki wo fumu to kiikii oto ga suru"
    assert kana_reading(romaji) == "ブレーキを ふむと きいきい おとが する"
    hits = rag.search(romaji, "minato-soleil-2022")
    assert hits == rag.search("ブレーキを ふむと きいきい おとが する", "minato-soleil-2022")
    assert hits[0]["section"] == "ブレーキ時にキーキー音がする"
