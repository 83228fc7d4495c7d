"""Memory flow with a Replay client: exact message stacks, episode before extraction, retries, edits, deletes.

These tests pin the spec's three extraction calls (entities, facts, loops: mode "separate"), with the
background job run inline (no worker). The combined call (the default) and the worker are covered in
test_memory_background.py.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from core.flows.memory import chat, extraction
from core.flows.memory.browse import Filters, units_frame
from core.flows.memory.constants import DAY, EXTRACTION_SEPARATE, TRAILER_MARKER
from core.flows.memory.edits import InvalidEdit, apply_edits
from core.flows.memory.extraction import episode_block, extraction_messages
from core.flows.memory.lanes import keyword_lanes, unicode61_lane
from core.flows.memory.stores import memory_collection
from core.flows.memory.versions import edit_unit, revert_unit, soft_delete, versions_of
from core.llm.base import ProviderError
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store.memory.keyword_lanes import ensure_unicode61_baseline
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    edges,
    payload_episode,
    payload_fact,
    payload_loop,
    retrieval_traces,
    unit_entities,
    units,
)

run_turn = functools.partial(chat.run_turn, extraction=EXTRACTION_SEPARATE)
retry_pending_extractions = functools.partial(extraction.retry_pending_extractions, mode=EXTRACTION_SEPARATE)

NOW = 1_795_000_000
USER = "同僚の田中さんと新宿でラーメンを食べた。来週また行く約束をした。"
REPLY = "いいですね！田中さんとのラーメン、楽しそうです。"
TRAILER = {
    "reflection_text": "嬉しい報告だった",
    "persona_affect_label": "joy",
    "persona_affect_intensity": 0.6,
    "topic_tags": ["ラーメン"],
    "salience": 0.7,
    "confidence": 0.8,
    "persona_response_policy": {"cooperation": 0.9, "refusal_bias": 0.1, "refusal_allowed": False},
}
ENTITIES = {
    "entities": [
        {
            "type_label": "person",
            "roles": ["Colleague"],
            "name": "田中",
            "aliases": ["田中さん"],
            "confidence": 0.9,
        },
        {"type_label": "PLACE", "roles": [], "name": "新宿", "aliases": [], "confidence": 0.8},
    ],
    "relations": [
        {
            "src": "PERSON:SPEAKER",
            "relation": "colleague",
            "dst": "PERSON:田中",
            "confidence": 0.8,
            "evidence": "同僚の田中さん",
        }
    ],
}
FACTS = {
    "facts": [
        {
            "subject": {"type_label": "PERSON", "name": "SPEAKER"},
            "predicate": "likes",
            "object_text": "ラーメン",
            "object": None,
            "confidence": 0.8,
            "validity": {"from": None, "to": None},
        }
    ]
}
LOOPS = {
    "loops": [{"due_at": NOW + 7 * DAY, "loop_text": "来週、田中さんとまたラーメンに行く", "confidence": 0.7}]
}
BOND = {
    "summary_text": "ラーメンの話をした",
    "key_events": [{"unit_id": 1, "why": "最初の会話"}, {"unit_id": 999, "why": "x"}],
    "bond_state": "はじまり",
}
PERSON = {
    "summary_text": "田中さんは同僚",
    "favorability_score": 0.6,
    "favorability_reasons": [],
    "key_events": [],
    "notes": None,
}


@pytest.fixture
def store(tmp_path: Path, engine: Engine):  # type: ignore[no-untyped-def]
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    return repo, memory_collection(open_chroma(tmp_path), LOCAL_PERSON)


def j(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def full_turn_outputs(
    reply: str = REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
) -> list[str | ProviderError]:
    return [reply, j(ENTITIES), j(FACTS), j(LOOPS), j(BOND), j(PERSON)]


def extracted(entities: object = ENTITIES, facts: object = FACTS, loops: object = LOOPS) -> str:
    """One answer of the combined extraction call (the default): the three spec shapes together."""
    return j({"entities": entities, "facts": facts, "loops": loops})


def combined_turn_outputs(
    reply: str = REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
) -> list[str | ProviderError]:
    """full_turn_outputs with the default extraction: reply, one extraction, bond and person summaries."""
    return [reply, extracted(), j(BOND), j(PERSON)]


def count(repo: MemoryRepository, table, *where) -> int:  # type: ignore[no-untyped-def]
    with repo.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar() or 0)


def test_chat_turn_exact_stacks_and_stored_rows(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    client = ReplayClient(full_turn_outputs())
    _prepared, outcome = run_turn(repo, collection, client, [], USER, NOW)
    assert outcome.ok and outcome.reply_text == REPLY and outcome.reflection_source == "trailer"
    assert outcome.trailer == TRAILER and client.remaining == 0
    steps = [r.tags["step"] for r in client.requests]
    assert steps == [
        "chat",
        "extract_entities",
        "extract_facts",
        "extract_loops",
        "summary_bond",
        "summary_person",
    ]
    chat = client.requests[0]
    assert chat.json_schema is None and chat.tags == {"flow": "memory", "step": "chat"}
    assert [m["role"] for m in chat.messages] == ["system", "user"] and chat.messages[1]["content"] == USER
    assert (
        "灯（あかり）" in chat.messages[0]["content"]
        and "（関連する記憶はありません）" in chat.messages[0]["content"]
    )
    assert TRAILER_MARKER in chat.messages[0]["content"]
    assert client.requests[1].messages == extraction_messages("entities", USER, REPLY, NOW, NOW)
    assert client.requests[1].messages[1]["content"] == episode_block(USER, REPLY, NOW)
    assert client.requests[1].messages[1]["content"].endswith(f"ユーザー: {USER}\n灯: {REPLY}")
    assert f"現在時刻（UNIX秒）: {NOW}" in client.requests[3].messages[0]["content"]
    assert client.requests[1].json_schema.name == "memory_entities"
    with repo.connect() as conn:
        ep = conn.execute(select(units, payload_episode).join(payload_episode)).mappings().one()
        assert (ep["reply_text"], ep["persona_affect_label"], ep["salience"], ep["extract_state"]) == (
            REPLY,
            "joy",
            0.7,
            "done",
        )
        assert json.loads(ep["topic_tags"]) == ["ラーメン"]
        fact = conn.execute(select(payload_fact)).mappings().one()
        assert json.loads(fact["evidence_unit_ids_json"]) == [ep["id"]] and fact["predicate"] == "likes"
        loop = conn.execute(select(payload_loop)).mappings().one()
        # due NOW + 7 days; issue 12: kept 3 days past its due time
        assert loop["expires_at"] == NOW + 10 * DAY and loop["source_unit_id"] == ep["id"]
        assert conn.execute(select(func.count()).select_from(edges)).scalar() == 1
        trace = json.loads(conn.execute(select(retrieval_traces.c.trace_json)).scalar_one())
    assert trace["q1"] == trace["q2"] == USER and trace["queries_run"] == 1
    assert {"vector/Q1", "trigram/Q1", "bigram/Q1", "entity/Q1"} <= set(trace["lanes"])
    assert trace["thresholds"]["drop_below"] == 0.28
    assert trace["pack"]["facts"] == []  # nothing stored before the first turn
    bond = outcome.summaries[0]
    assert bond.ok and bond.scope_label == "bond"


def test_second_turn_retrieves_and_injects_memory(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    client = ReplayClient(
        [
            REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
            j({"entities": [], "relations": []}),
            j({"facts": []}),
            j({"loops": []}),
        ]
    )
    history = [{"role": "user", "content": USER}, {"role": "assistant", "content": REPLY}]
    prepared, _outcome = run_turn(
        repo, collection, client, history, "田中さんとのラーメンの話、覚えてる？", NOW + 600
    )
    assert prepared.retrieval.q2 == f"{USER}\n{REPLY}\n---\n田中さんとのラーメンの話、覚えてる？"
    assert prepared.retrieval.matched_entities == ["田中さん"]  # longest match: the alias
    assert prepared.retrieval.selected[0].unit_id == 1  # the first episode
    [fact] = prepared.retrieval.trace()["pack"]["facts"]  # every component of the fact score is traced
    assert fact == {"unit_id": 2, "confidence": 0.8, "salience": 0.5, "rec": 0.9998, "pin": 0, "score": 0.685}
    system = client.requests[0].messages[0]["content"]
    assert "## 関連する記憶" in system and "ユーザーが好きなもの:ラーメン" in system
    assert "来週、田中さんとまたラーメンに行く" in system
    assert [m["role"] for m in client.requests[0].messages] == ["system", "user", "assistant", "user"]


def test_missing_trailer_triggers_reflection_call(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    reflection = {k: v for k, v in TRAILER.items() if k != "persona_response_policy"}
    client = ReplayClient([REPLY, j(reflection), j(ENTITIES), j(FACTS), j(LOOPS), j(BOND), j(PERSON)])
    _, outcome = run_turn(repo, collection, client, [], USER, NOW)
    assert outcome.reflection_source == "reflection" and outcome.trailer_errors == [
        "trailer marker not found"
    ]
    assert client.requests[1].tags["step"] == "reflection"
    assert client.requests[1].json_schema.name == "memory_reflection"


def test_invalid_trailer_also_falls_back(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    bad = REPLY + TRAILER_MARKER + '{"persona_affect_label": "ecstatic"}'
    client = ReplayClient(
        [bad, "not json", "still not json", "nope", j(ENTITIES), j(FACTS), j(LOOPS), j(BOND), j(PERSON)]
    )
    _, outcome = run_turn(repo, collection, client, [], USER, NOW)
    assert outcome.reply_text == REPLY and outcome.reflection_source == "default"
    assert outcome.reflection["persona_affect_label"] == "neutral"


def test_failed_extraction_keeps_episode_and_is_retried(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    outputs = full_turn_outputs()
    outputs[1] = ProviderError("timeout", "slow")
    outputs = outputs[:5]  # no person summary: no PERSON entity stored
    client = ReplayClient(outputs)
    _, outcome = run_turn(repo, collection, client, [], USER, NOW)
    assert outcome.episode_id == 1 and outcome.extraction is not None and not outcome.extraction.ok
    assert outcome.extraction.errors["entities"].startswith("provider_error")
    with repo.connect() as conn:
        state = conn.execute(
            select(units.c.extract_state, units.c.extract_attempts).where(units.c.id == 1)
        ).one()
    assert tuple(state) == ("failed", 1)
    retry = ReplayClient([j(ENTITIES), j(FACTS), j(LOOPS)])
    results = retry_pending_extractions(repo, collection, retry, NOW + 60)
    assert [r.ok for r in results] == [True] and retry.remaining == 0
    assert count(repo, unit_entities, unit_entities.c.unit_id == 1) == 2
    assert count(repo, payload_fact) == 1  # the fact was merged, not duplicated


def test_edit_is_versioned_reindexed_and_revertible(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    assert (
        edit_unit(repo, collection, 1, {"input_text": "鎌倉で海鮮丼を食べた", "salience": 0.2}, NOW + 1) == 2
    )
    with repo.connect() as conn:
        assert [u for u, _ in keyword_lanes(conn, LOCAL_PERSON.id, "海鮮丼", 5)["trigram"]] == [1]
        assert keyword_lanes(conn, LOCAL_PERSON.id, "新宿でラーメン", 5)["trigram"][0][0] != 1
    assert collection.get(ids=["1"], include=["documents"])["documents"][0].startswith("鎌倉で海鮮丼")
    assert revert_unit(repo, collection, 1, 1, NOW + 2) == 3
    versions = versions_of(repo, 1)
    assert [v.change_kind for v in versions] == ["create", "edit", "revert"]
    assert versions[2].snapshot["input_text"] == USER and versions[2].snapshot["salience"] == 0.7
    with repo.connect() as conn:
        assert keyword_lanes(conn, LOCAL_PERSON.id, "海鮮丼", 5)["trigram"] == []
    soft_delete(repo, collection, 1, NOW + 3)
    assert versions_of(repo, 1)[-1].snapshot["state"] == "deleted"


def test_japanese_keyword_lanes_beat_unicode61(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    reflection = {k: v for k, v in TRAILER.items() if k != "persona_response_policy"}
    client = ReplayClient(
        ["了解です", j(reflection), j({"entities": [], "relations": []}), j({"facts": []}), j({"loops": []})]
    )
    _, second = run_turn(repo, collection, client, [], "来月の締切が心配", NOW + 60)
    with repo.begin() as conn:
        ensure_unicode61_baseline(conn)
        assert 1 in [
            u for u, _ in keyword_lanes(conn, LOCAL_PERSON.id, "ラーメン", 5)["trigram"]
        ]  # inside a sentence
        assert [u for u, _ in keyword_lanes(conn, LOCAL_PERSON.id, "締切はいつ？", 5)["bigram"]] == [
            second.episode_id
        ]
        # unicode61 sees whole sentences as tokens: the episode is not found (only the fact "…:ラーメン" is).
        assert 1 not in [u for u, _ in unicode61_lane(conn, LOCAL_PERSON.id, "ラーメン", 5)]
        assert unicode61_lane(conn, LOCAL_PERSON.id, "締切", 5) == []


def test_expired_loops_are_purged_on_the_next_turn(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    assert count(repo, payload_loop) == 1
    later = NOW + 11 * DAY  # due NOW + 7 days, kept 3 days past it (issue 12)
    client = ReplayClient(
        [
            "はい" + TRAILER_MARKER + j(TRAILER),
            j({"entities": [], "relations": []}),
            j({"facts": []}),
            j({"loops": []}),
            j(BOND),
            j(PERSON),
        ]
    )
    prepared, _ = run_turn(repo, collection, client, [], "こんにちは", later)
    assert len(prepared.purged_loops) == 1 and count(repo, payload_loop) == 0
    assert collection.get(ids=[str(prepared.purged_loops[0])])["ids"] == []


def test_browser_table_edits_become_versions(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    before, total = units_frame(repo, "EPISODE", Filters())
    assert total == 1 and before.loc[0, "input_text"] == USER and before.loc[0, "topic_tags"] == "ラーメン"
    after = before.copy()
    after.loc[0, "salience"] = 0.1
    after.loc[0, "topic_tags"] = "ラーメン、新宿"
    after.loc[0, "reply_text"] = "編集した返答"  # editable
    assert apply_edits(repo, collection, "EPISODE", before, after, NOW + 5) == {1: 2}
    snap = versions_of(repo, 1)[-1].snapshot
    assert (snap["salience"], json.loads(snap["topic_tags"]), snap["reply_text"]) == (
        0.1,
        ["ラーメン", "新宿"],
        "編集した返答",
    )
    bad = before.copy()
    bad.loc[0, "persona_affect_label"] = "ecstatic"
    with pytest.raises(InvalidEdit):
        apply_edits(repo, collection, "EPISODE", before, bad, NOW + 6)
    frame, _ = units_frame(repo, "EPISODE", Filters(emotion_labels=("sadness",)))
    assert frame.empty
    facts, _ = units_frame(repo, "FACT", Filters(tag="", state="active"))
    assert facts.loc[0, "subject"] == "ユーザー" and facts.loc[0, "object_text"] == "ラーメン"


def test_a_later_turn_catches_up_on_a_failed_extraction(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    outputs = full_turn_outputs()
    outputs[1] = ProviderError("timeout", "slow")
    run_turn(repo, collection, ReplayClient(outputs[:5]), [], USER, NOW)
    second = ReplayClient([*full_turn_outputs()[:4], j(ENTITIES), j(FACTS), j(LOOPS), j(PERSON)])
    _, outcome = run_turn(repo, collection, second, [], USER, NOW + 60)
    steps = [r.tags["step"] for r in second.requests]
    assert steps[:7] == ["chat", *["extract_entities", "extract_facts", "extract_loops"] * 2]
    assert outcome.extraction is not None and outcome.extraction.ok
    assert [r.ok for r in outcome.retried] == [True]
    with repo.connect() as conn:
        state = conn.execute(select(units.c.extract_state).where(units.c.id == 1)).scalar_one()
    assert state != "failed" and count(repo, unit_entities, unit_entities.c.unit_id == 1) == 2
