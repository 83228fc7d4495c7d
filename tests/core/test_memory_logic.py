"""Pure logic of the memory flow: loop expiry, normalization, exclusive predicates, rerank, thresholds, mood."""

from __future__ import annotations

import json
import math

import pytest

from core.flows.memory import demo_patterns, scoring
from core.flows.memory.constants import DAY, HOUR
from core.flows.memory.demo import memory_persona
from core.flows.memory.loops import cap_due_at, compute_loop_expires_at
from core.flows.memory.mood import compute_mood, impact, mood_tau
from core.flows.memory.normalize import (
    normalize_entities,
    normalize_facts,
    normalize_loops,
    normalize_predicate,
)
from core.flows.memory.retrieval import build_queries
from core.flows.memory.summaries import summary_messages
from core.flows.memory.text import bigram_document, query_terms
from core.llm.base import LLMRequest

NOW = 1_795_000_000


@pytest.mark.parametrize(
    ("due", "expected"),
    [
        (None, NOW + 7 * DAY),
        (NOW + 2 * DAY, NOW + 5 * DAY),  # issue 12: due + 3 days (spec 03 alone: due)
        (NOW + 28 * DAY, NOW + 30 * DAY),  # due + 3 days capped
        (NOW - 5, NOW + 7 * DAY),  # past due -> default TTL
        (NOW, NOW + 7 * DAY),  # not in the future
        (NOW + 45 * DAY, NOW + 30 * DAY),  # capped
        (NOW + 30 * DAY, NOW + 30 * DAY),
    ],
)
def test_compute_loop_expires_at(due: int | None, expected: int) -> None:
    assert compute_loop_expires_at(due, NOW) == expected


def test_cap_due_at() -> None:
    assert cap_due_at(None, NOW) is None
    assert cap_due_at(NOW + 40 * DAY, NOW) == NOW + 30 * DAY
    assert cap_due_at(NOW + DAY, NOW) == NOW + DAY


def test_normalize_entities() -> None:
    data = {
        "entities": [
            {
                "type_label": "person",
                "roles": ["Friend", "friend"],
                "name": " 田中 ",
                "aliases": ["田中さん", "田中"],
                "confidence": 1.7,
            },
            {"type_label": "Person", "roles": [], "name": "私", "aliases": [], "confidence": -1},
            {"type_label": "place", "roles": ["PLACE"], "name": "", "aliases": [], "confidence": 0.5},
        ],
        "relations": [
            {
                "src": "person:user",
                "relation": "Friend",
                "dst": "PERSON:田中",
                "confidence": "x",
                "evidence": "友達の田中さん",
            }
        ],
    }
    out = normalize_entities(data)
    assert out["entities"] == [
        {
            "type_label": "PERSON",
            "name": "田中",
            "roles": ["friend"],
            "aliases": ["田中さん"],
            "confidence": 1.0,
        },
        {"type_label": "PERSON", "name": "SPEAKER", "roles": [], "aliases": [], "confidence": 0.0},
    ]
    assert out["relations"] == [
        {
            "src": ("PERSON", "SPEAKER"),
            "relation": "friend",
            "dst": ("PERSON", "田中"),
            "confidence": 0.5,
            "evidence": "友達の田中さん",
        }
    ]


def test_normalize_facts_speaker_predicates_and_clamps() -> None:
    facts = normalize_facts(
        {
            "facts": [
                {
                    "subject": None,
                    "predicate": "Loves",
                    "object_text": "ラーメン",
                    "object": None,
                    "confidence": 2,
                    "validity": {"from": None, "to": None},
                },
                {
                    "subject": {"type_label": "person", "name": "ユーザー"},
                    "predicate": "works at",
                    "object_text": "",
                    "object": {"type_label": "org", "name": "ACME"},
                    "confidence": 0.4,
                    "validity": {"from": 5, "to": None},
                },
                {
                    "subject": {"type_label": "PERSON", "name": "田中"},
                    "predicate": "sings_in",
                    "object_text": "合唱団",
                    "object": None,
                    "confidence": 0.5,
                    "validity": None,
                },
            ]
        }
    )
    assert [(f["subject"], f["predicate"], f["object_text"], f["confidence"]) for f in facts] == [
        (("PERSON", "SPEAKER"), "likes", "ラーメン", 1.0),
        (("PERSON", "SPEAKER"), "affiliated_with", "ACME", 0.4),
        (("PERSON", "田中"), "related_to", "合唱団", 0.5),
    ]
    assert facts[1]["valid_from"] == 5 and facts[1]["object"] == ("ORG", "ACME")
    assert normalize_predicate("name_is") == "name_is" and normalize_predicate("苦手") == "dislikes"


def test_normalize_loops() -> None:
    loops = normalize_loops(
        {
            "loops": [
                {"due_at": 3.0, "loop_text": " 次回 ", "confidence": 9},
                {"due_at": None, "loop_text": "次回", "confidence": 0.1},
                {"due_at": -1, "loop_text": "明日", "confidence": 0.3},
            ]
        }
    )
    assert loops == [
        {"loop_text": "次回", "due_at": 3, "confidence": 1.0},
        {"loop_text": "明日", "due_at": None, "confidence": 0.3},
    ]


def _fact(
    uid: int, predicate: str, occurred: int, subject: int = 1, valid_to: int | None = None, **kw: float
) -> dict:
    return {
        "unit_id": uid,
        "subject_entity_id": subject,
        "predicate": predicate,
        "valid_to": valid_to,
        "occurred_at": occurred,
        "confidence": kw.get("confidence", 0.5),
        "salience": kw.get("salience", 0.5),
        "pin": int(kw.get("pin", 0)),
    }


def test_exclusive_predicates_latest_wins_and_expired_excluded() -> None:
    facts = [
        _fact(1, "name_is", NOW - 10 * DAY, confidence=1.0),
        _fact(2, "name_is", NOW - DAY, confidence=0.2),  # newer: wins despite lower score
        _fact(3, "name_is", NOW - DAY, subject=2),  # other subject: kept
        _fact(4, "likes", NOW - 10 * DAY),
        _fact(5, "likes", NOW - DAY),  # not exclusive: both kept
        _fact(6, "goal_is", NOW, valid_to=NOW - 1),  # expired
    ]
    assert sorted(f.unit_id for f in scoring.select_facts(facts, NOW)) == [2, 3, 4, 5]


def test_fact_score_arithmetic_and_top_12() -> None:
    # 0.45*0.8 + 0.25*0.4 + 0.20*exp(-45/45) + 0.10*1
    assert scoring.fact_score(0.8, 0.4, 45 * DAY, 1) == pytest.approx(
        0.36 + 0.10 + 0.20 * math.exp(-1) + 0.10
    )
    facts = [_fact(i, "likes", NOW, confidence=i / 20) for i in range(20)]
    top = scoring.select_facts(facts, NOW)
    assert [f.unit_id for f in top] == list(range(19, 7, -1))
    assert top[0].rec == 1.0 and top[0].score == pytest.approx(0.45 * 0.95 + 0.25 * 0.5 + 0.20, abs=1e-4)


def test_rrf_merge() -> None:
    fused = dict(scoring.rrf_merge([[10, 20], [20, 30]]))
    assert fused[20] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[10] == pytest.approx(1 / 61) and fused[30] == pytest.approx(1 / 62)
    assert len(scoring.rrf_merge([list(range(100))])) == 60
    weighted = dict(scoring.rrf_merge([[10, 20], [20, 30]], weights=[2.0, 1.0]))
    assert weighted[10] == pytest.approx(2 / 61) and weighted[20] == pytest.approx(2 / 62 + 1 / 61)
    assert scoring.rrf_normalizer(5.0) == pytest.approx(5 / 61) and scoring.rrf_normalizer(0) == 1.0


def test_lex_and_recency_hand_computed() -> None:
    # query "abcd" grams {abc, bcd}; body "abcx" grams {abc, bcx}: dice = 2*1/4 = 0.5; factor 2/30.
    assert scoring.lex_score("abcd", "abcx") == pytest.approx(0.5 * 2 / 30)
    assert scoring.lex_score("ab", "abc") == 0.0
    q = "".join(chr(0x4E00 + i) for i in range(40))  # 38 grams -> factor 1
    assert scoring.lex_score(q, q) == pytest.approx(1.0)
    assert scoring.recency(45 * DAY) == pytest.approx(math.exp(-1))
    assert scoring.recency(-DAY) == 1.0


def test_rerank_arithmetic() -> None:
    body = "".join(chr(0x4E00 + i) for i in range(40))
    a = scoring.Candidate(1, "EPISODE", rrf=2 / 61, body=body, occurred_at=NOW - 45 * DAY)
    b = scoring.Candidate(2, "EPISODE", rrf=1 / 70, body="無関係な文章です", occurred_at=NOW)
    ranked = scoring.rerank([b, a], [body], NOW, lists_weight=4)
    assert [c.unit_id for c in ranked] == [1, 2]
    assert a.rrf_norm == pytest.approx(0.5) and a.lex == pytest.approx(1.0)
    assert a.final == pytest.approx(0.55 * 0.5 + 0.35 * 1.0 + 0.10 * math.exp(-1))
    assert b.rrf_norm == pytest.approx((1 / 70) / (4 / 61))
    assert b.final == pytest.approx(0.55 * b.rrf_norm + 0.10)


def _cand(uid: int, final: float, body: str) -> scoring.Candidate:
    c = scoring.Candidate(uid, "EPISODE", 0.0, body, NOW)
    c.final = final
    return c


def test_thresholds_dedupe_and_limit() -> None:
    base = "今日は新宿でラーメンを食べてとても美味しかったです本当に"
    ranked = [
        _cand(1, 0.9, base),
        _cand(2, 0.8, base + "ね"),  # near-duplicate of 1
        *[_cand(10 + i, 0.7 - i * 0.01, f"別の話題その{i}番目の記憶について長めの文章") for i in range(6)],
        _cand(99, 0.27, "閾値より下の記憶"),
    ]
    chosen = scoring.select_pack(ranked)
    assert [c.unit_id for c in chosen] == [1, 10, 11, 12, 13]
    decisions = {c.unit_id: c.decision for c in ranked}
    assert decisions[2] == "duplicate_of_1"
    assert decisions[14] == decisions[15] == "over_limit"
    assert decisions[99] == "below_0.28"


def test_nothing_injected_when_best_below_035() -> None:
    ranked = [_cand(1, 0.34, "弱い候補その一"), _cand(2, 0.30, "弱い候補その二")]
    assert scoring.select_pack(ranked) == []
    assert {c.decision for c in ranked} == {"best_below_0.35"}
    assert [c.unit_id for c in scoring.select_pack([_cand(3, 0.35, "ちょうど")])] == [3]


def test_build_queries() -> None:
    assert build_queries([], "こんにちは") == ("こんにちは", "こんにちは")
    history = [{"role": "user", "content": f"m{i}"} for i in range(8)]
    q1, q2 = build_queries(history, "今日")
    assert q1 == "今日" and q2 == "m2\nm3\nm4\nm5\nm6\nm7\n---\n今日"


def test_query_terms_and_bigram_document() -> None:
    long_terms, short_terms = query_terms("来週の締切日とラーメンの話、ＡＢＣ社")
    assert long_terms == ["締切日", "ラーメン", "abc"]
    assert short_terms == ["来週", "締切", "切日"]
    assert bigram_document("締切はラーメン") == "締切 ラー ーメ メン"


def test_mood_decay() -> None:
    assert mood_tau(0.0) == 120.0 and mood_tau(1.0) == 6 * HOUR
    assert impact(1.0, 1.0, 1.0, 6 * HOUR) == pytest.approx(math.exp(-1))
    assert impact(0.5, 0.5, 0.8, 0) == pytest.approx(0.2)
    fresh = [{"label": "anger", "intensity": 1.0, "salience": 1.0, "confidence": 1.0, "occurred_at": NOW}] * 2
    mood = compute_mood(fresh, NOW)
    assert mood.levels["anger"] == pytest.approx(1 - math.exp(-2), abs=1e-4)
    assert mood.label == "anger" and mood.response_policy["refusal_allowed"] is True
    later = compute_mood(fresh, NOW + 12 * HOUR)  # two taus later: 2e^-2 -> 1-e^(-0.27) = 0.237
    assert later.levels["anger"] == pytest.approx(1 - math.exp(-2 * math.exp(-2)), abs=1e-4)
    assert later.response_policy["refusal_allowed"] is False
    faint = [{"label": "joy", "intensity": 0.3, "salience": 0.3, "confidence": 0.5, "occurred_at": NOW}]
    assert compute_mood(faint, NOW).label == "neutral"  # 1-e^-0.045 < 0.15
    low_salience = [
        {"label": "joy", "intensity": 1.0, "salience": 0.1, "confidence": 1.0, "occurred_at": NOW - 3600}
    ]
    assert compute_mood(low_salience, NOW).levels["joy"] < 0.001  # τ ≈ 332 s: gone after an hour


def test_demo_facts_drop_leading_time_words() -> None:
    facts = demo_patterns.facts("最近ヨガが好きで、週に何回か通っています。実はパクチーが苦手。")
    assert [(f["predicate"], f["object_text"]) for f in facts] == [
        ("likes", "ヨガ"),
        ("dislikes", "パクチー"),
    ]


def test_mood_is_described_in_japanese() -> None:
    fresh = [{"label": "anger", "intensity": 1.0, "salience": 1.0, "confidence": 1.0, "occurred_at": NOW}] * 2
    text = compute_mood(fresh, NOW).describe()
    assert text.startswith("現在の気分: 怒り（喜び 0.00、悲しみ 0.00、怒り 0.86、不安 0.00）")
    assert "断ってもよい" in text and "anger" not in text


def test_demo_topic_summary_names_its_topic_not_the_persona() -> None:
    class Ep:
        id, occurred_at, input_text, reply_text = 7, NOW, "締切が心配", "大丈夫ですよ"

    messages = summary_messages("memory_topic_summary", [Ep()], "締切")
    request = LLMRequest(messages=messages, tags={"flow": "memory", "step": "summary_topic"})
    data = json.loads(memory_persona(request))
    assert data["summary_text"].startswith("（デモ）「締切」は最近1回話題に出ました")
