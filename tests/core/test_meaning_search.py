"""Search by meaning on the new default embedder: switching embedders re-indexes (with progress) instead of
mixing vectors; the manual RAG finds an owner's everyday words and its 0.3 threshold drops what is unrelated;
the urgency fast path rates critical phrasings the rules were not written for as critical."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.flows.diagnosis.constants import SAMPLES_DIR
from core.flows.diagnosis.manual_vectors import chunk_vectors, precomputed, text_digest
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.urgency import CRITICAL_RULES, FRAME_NOTE, keyword_urgency_check
from core.flows.diagnosis.urgency_meaning import UrgencyJudge, fast_urgency_check
from core.flows.memory.chat import run_turn
from core.flows.memory.constants import EXTRACTION_SEPARATE
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.search.embedders import BundledE5Embedder, NgramEmbedder
from core.search.vectors import open_chroma
from core.store import open_store

NOW = 1_795_000_000


def test_switching_the_embedder_reindexes_every_unit_into_its_own_collection(tmp_path: Path) -> None:
    engine, chroma = open_store(tmp_path), open_chroma(tmp_path)
    repo = memory_repository(engine, LOCAL_PERSON, lambda: NOW)
    before = memory_collection(chroma, LOCAL_PERSON, NgramEmbedder())
    for text in ("新宿でラーメンを食べた", "週末は高尾山に登った"):
        run_turn(repo, before, demo_client(), [], text, NOW, extraction=EXTRACTION_SEPARATE)
    units = before.count()
    after = memory_collection(chroma, LOCAL_PERSON, BundledE5Embedder())
    assert after.count() == 0 and after.name != before.name
    seen: list[tuple[int, int]] = []
    report = reconcile_memory_index(
        repo, after, batch=2, progress=lambda done, total: seen.append((done, total))
    )
    assert after.count() == units == len(report.indexed) and report.removed == []
    assert seen[-1] == (units, units) and len(seen) == (units + 1) // 2
    assert (after.metadata or {})["dim"] == 384 and (before.metadata or {})["dim"] == 512
    assert before.count() == units  # the old index is left as it was, never mixed into the new one


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> RAGService:
    service = RAGService(open_chroma(tmp_path_factory.mktemp("rag")))
    service.index_manuals()
    return service


@pytest.mark.parametrize(
    ("query", "section"),
    [("給油のフタがあかない", "給油口が開かない"), ("ナビの画面が見にくいほど暗い", "ディスプレイが暗い")],
)
def test_an_owners_everyday_words_find_the_manual_section(rag: RAGService, query: str, section: str) -> None:
    found = rag.search(query, "minato-soleil-2022")
    assert section in [s["section"] for s in found]
    assert all(s["score"] > 0.3 and s["vehicle_id"] == "minato-soleil-2022" for s in found)


def test_the_threshold_drops_an_unrelated_query(rag: RAGService) -> None:
    assert rag.search("駅前のパン屋さんのおすすめを教えて", "minato-soleil-2022") == []


def test_the_index_holds_every_chunk_whole_and_by_sentence(rag: RAGService) -> None:
    assert rag.is_indexed() and rag.chunk_count() == len(rag._all_chunks())
    ids = rag.collection.get(include=[])["ids"]
    assert "minato-soleil-2022-006" in ids and "minato-soleil-2022-006~s1" in ids
    assert rag.reconcile() == (0, 0)


@pytest.fixture(scope="module")
def judge() -> UrgencyJudge:
    return UrgencyJudge(BundledE5Embedder())


@pytest.mark.parametrize("text", ["下り坂で止まれなくなった", "ペダルを戻してもスピードが上がり続ける"])
def test_the_issues_critical_phrasings_are_critical_by_meaning_alone(judge: UrgencyJudge, text: str) -> None:
    meaning, near = judge.judge(text)
    assert (meaning.level, meaning.can_drive, meaning.visit_urgency) == ("critical", False, "immediate")
    assert near[0].similarity >= near[-1].similarity
    assert any(r.startswith("意味の近い症状例「") and r.endswith("（緊急度: 緊急）") for r in meaning.reasons)
    result = fast_urgency_check(text, judge)
    assert (result.level, result.can_drive, result.visit_urgency) == ("critical", False, "immediate")


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("ペダルを戻してもスピードが上がり続ける", "unintended_acceleration"),
        ("タイヤのボルトが緩んでいる", "wheel_loose"),
    ],
)
def test_the_rules_now_name_them_too(judge: UrgencyJudge, text: str, rule: str) -> None:
    reasons = {r.name: r.reason for r in CRITICAL_RULES}
    result = keyword_urgency_check(text)
    assert (result.level, result.reasons) == ("critical", [reasons[rule]])
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("ナビの音声が小さい", "low"),
        ("次のオイル交換はいつ？", "low"),
        ("クルーズコントロールの使い方を教えて", "low"),
    ],
)
def test_not_urgent_phrasings_are_never_raised_to_high(judge: UrgencyJudge, text: str, level: str) -> None:
    # ナビの音声 lies nearest to 「ナビの案内の音声が出ない」 (low, convenience equipment), never high or critical
    assert fast_urgency_check(text, judge).level == level


def test_without_a_judge_the_fast_path_is_the_rules_alone() -> None:
    text = "下り坂で止まれなくなった"
    assert fast_urgency_check(text, None) == keyword_urgency_check(text)


def test_the_shipped_manual_vectors_are_the_bundled_models_and_cover_every_text(rag: RAGService) -> None:
    embedder = BundledE5Embedder()
    shipped = precomputed(SAMPLES_DIR, embedder.key)
    texts = sorted({text for c in rag._all_chunks() for _, text in chunk_vectors(c)})
    assert {text_digest(t) for t in texts} <= set(shipped)  # else run build_manual_vectors.py
    sample = texts[:: max(1, len(texts) // 8)]
    assert np.allclose(
        np.stack([shipped[text_digest(t)] for t in sample]), embedder.embed_documents(sample), atol=1e-5
    )
    assert precomputed(SAMPLES_DIR, "ngram512") == {}


def test_a_question_whether_it_is_normal_goes_no_higher_than_medium_by_meaning(judge: UrgencyJudge) -> None:
    # (the first set's 「ブレーキを踏まないとシフトレバーが動かないのは正常？」 is an example itself now: low)
    meaning, near = judge.judge("ブレーキペダルを踏まないとエンジンがかからないのは正常？")
    assert meaning.level == "medium" and meaning.can_drive
    assert meaning.reasons == [
        f"意味の近い症状例「{near[0].text}」（正常かどうかを尋ねる文のため、緊急度は中まで）"
    ]


def test_the_rules_still_rate_a_failure_asked_as_a_question() -> None:
    result = fast_urgency_check("ブレーキを踏んでも効かないけど大丈夫？", None)
    assert (result.level, result.can_drive) == ("critical", False)


def test_a_danger_in_somebody_elses_car_goes_no_higher_than_medium_by_meaning(judge: UrgencyJudge) -> None:
    meaning, near = judge.judge("友達の車が高速でタイヤが外れそうになったらしい")
    assert near[0].level == "critical"  # the meaning is a loose wheel...
    assert (meaning.level, meaning.can_drive) == ("medium", True)  # ...but not this person's
    assert meaning.reasons == [f"意味の近い症状例「{near[0].text}」{FRAME_NOTE}"]
