"""Summary schedule (issue 5): bond summary at most every 6 h and only after a new episode, from up to 200
episodes of the last 7 days; person / topic summaries for the 3 most-mentioned of 14 days, each every 12 h.
Also the mood that the next turn is given (last 500 episodes, response policy in the system prompt)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from core.flows.memory.chat import prepare_turn
from core.flows.memory.constants import DAY, HOUR
from core.flows.memory.graph import link_unit_entity, upsert_entity
from core.flows.memory.mood import load_mood
from core.flows.memory.summaries import bond_summary_due, entity_summary_due, run_summaries, top_entities
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store.memory.repository import MemoryRepository

NOW = 1_795_000_000
BOND = json.dumps({"summary_text": "まとめ", "key_events": [], "bond_state": "良好"}, ensure_ascii=False)
PERSON = json.dumps(
    {
        "summary_text": "人物",
        "favorability_score": 0.5,
        "favorability_reasons": [],
        "key_events": [],
        "notes": None,
    },
    ensure_ascii=False,
)
TOPIC = json.dumps({"summary_text": "話題", "key_events": [], "notes": None}, ensure_ascii=False)
REFLECTION = {"persona_affect_label": "neutral", "topic_tags": [], "salience": 0.5, "confidence": 0.5}


@pytest.mark.parametrize(
    ("last_run", "last_episode", "now", "due"),
    [
        (None, None, NOW, False),  # nothing to summarize
        (None, NOW - 10, NOW, True),  # never run
        (NOW - 6 * HOUR + 1, NOW - 10, NOW, False),  # less than 6 h ago
        (NOW - 6 * HOUR, NOW - 6 * HOUR, NOW, False),  # 6 h, but no episode since
        (NOW - 6 * HOUR, NOW - 6 * HOUR + 1, NOW, True),  # 6 h and a new episode
    ],
)
def test_bond_summary_due(last_run: int | None, last_episode: int | None, now: int, due: bool) -> None:
    assert bond_summary_due(last_run, last_episode, now) is due


def test_entity_summary_due() -> None:
    assert entity_summary_due(None, NOW)
    assert not entity_summary_due(NOW - 12 * HOUR + 1, NOW)
    assert entity_summary_due(NOW - 12 * HOUR, NOW)


def _episode(repo: MemoryRepository, at: int, text: str = "こんにちは", entity: dict | None = None) -> int:
    with repo.begin() as conn:
        uid = repo.save_episode(text, "はい", REFLECTION, source="default", occurred_at=at, now=at, conn=conn)
        if entity:
            link_unit_entity(conn, uid, upsert_entity(conn, LOCAL_PERSON.id, entity, at))
    return uid


def test_bond_summary_reads_at_most_200_episodes_of_the_last_7_days(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    old = _episode(repo, NOW - 7 * DAY - 1, "一週間より前")
    ids = [_episode(repo, NOW - 6 * DAY + i * 60, f"発話{i}") for i in range(205)]
    client = ReplayClient([BOND])
    [outcome] = run_summaries(repo, None, client, NOW)
    assert outcome.ok and outcome.scope_label == "bond" and outcome.label() == "絆サマリー（直近7日）"
    lines = client.requests[0].messages[1]["content"].splitlines()
    assert len(lines) == 200
    assert lines[0].startswith(f"[unit_id={ids[5]}]") and lines[-1].startswith(f"[unit_id={ids[-1]}]")
    assert all(f"unit_id={old}]" not in line for line in lines)


def test_summaries_follow_their_schedule_across_turns(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    tanaka = {"type_label": "PERSON", "name": "田中", "roles": [], "aliases": []}
    _episode(repo, NOW, "田中さんと会った", tanaka)
    first = ReplayClient([BOND, PERSON])
    assert [o.label() for o in run_summaries(repo, None, first, NOW)] == [
        "絆サマリー（直近7日）",
        "人物サマリー「田中」",
    ]
    _episode(repo, NOW + HOUR, "また田中さん", tanaka)
    assert run_summaries(repo, None, ReplayClient([]), NOW + HOUR) == []  # nothing is due after 1 h
    _episode(repo, NOW + 6 * HOUR, "田中さんの話", tanaka)
    six = ReplayClient([BOND])
    assert [o.scope_label for o in run_summaries(repo, None, six, NOW + 6 * HOUR)] == ["bond"]
    # 12 h: the person summary is due again; the bond summary is not (no new episode since its run).
    twelve = ReplayClient([PERSON])
    assert [o.scope_label for o in run_summaries(repo, None, twelve, NOW + 12 * HOUR)] == ["person"]


def test_only_the_3_most_mentioned_entities_of_14_days_get_summaries(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    for i, name in enumerate(["読書", "ヨガ", "料理", "映画"]):  # 4, 3, 2, 1 mentions
        for _ in range(4 - i):
            _episode(repo, NOW - DAY, name, {"type_label": "TOPIC", "name": name})
    for _ in range(5):  # many mentions, but older than 14 days
        _episode(repo, NOW - 15 * DAY, "古い話題", {"type_label": "TOPIC", "name": "古い話題"})
    with repo.connect() as conn:
        assert [(name, n) for _, name, n in top_entities(conn, LOCAL_PERSON.id, "TOPIC", NOW)] == [
            ("読書", 4),
            ("ヨガ", 3),
            ("料理", 2),
        ]
    client = ReplayClient([BOND, TOPIC, TOPIC, TOPIC])
    outcomes = run_summaries(repo, None, client, NOW)
    assert [o.label() for o in outcomes] == [
        "絆サマリー（直近7日）",
        "トピックサマリー「読書」",
        "トピックサマリー「ヨガ」",
        "トピックサマリー「料理」",
    ]
    assert "話題「読書」" in client.requests[1].messages[0]["content"]


def _angry(repo: MemoryRepository, at: int, label: str = "anger") -> None:
    reflection = {
        "persona_affect_label": label,
        "persona_affect_intensity": 1.0,
        "topic_tags": [],
        "salience": 1.0,
        "confidence": 1.0,
        "persona_response_policy": {"cooperation": 0.9, "refusal_bias": 0.2, "refusal_allowed": False},
    }
    repo.save_episode("ひどい", "怒っています", reflection, source="trailer", occurred_at=at, now=at)


def test_mood_policy_is_injected_into_the_next_turn(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    _angry(repo, NOW - 60)
    _angry(repo, NOW - 30)
    prepared = prepare_turn(repo, None, [], "ねえ", NOW)
    system = prepared.messages[0]["content"]
    assert prepared.mood.label == "anger" and prepared.mood.response_policy["refusal_allowed"] is True
    assert "現在の気分: 怒り" in system and "断ってもよい" in system
    # cooperation starts from the last trailer's 0.9 and is lowered by anger: min(0.9, 1 - 0.5 * anger).
    anger = prepared.mood.levels["anger"]
    assert prepared.mood.response_policy["cooperation"] == round(min(0.9, 1 - 0.5 * anger), 3)


def test_mood_reads_only_the_last_500_episodes(engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    _angry(repo, NOW - 2)  # the oldest: pushed out once 500 newer episodes exist
    for _ in range(499):
        _angry(repo, NOW - 1, "neutral")
    with repo.connect() as conn:
        assert load_mood(conn, LOCAL_PERSON.id, NOW).levels["anger"] > 0.5
    _angry(repo, NOW - 1, "neutral")
    with repo.connect() as conn:
        assert load_mood(conn, LOCAL_PERSON.id, NOW).levels["anger"] == 0.0
