"""Hard delete cascades everywhere (issue 5): FTS, Chroma, unit_entities, edges, evidence, derived units,
traces that quote the episode, extraction log, orphan entities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from core.flows.memory.deletion import hard_delete
from core.flows.memory.stores import memory_collection
from core.flows.memory.versions import EditError, edit_unit, revert_unit
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store.memory.keyword_lanes import FTS_BIGRAM, FTS_LEXICAL, FTS_TRIGRAM, fts_count
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    edges,
    entities,
    entity_aliases,
    extraction_log,
    payload_fact,
    payload_loop,
    payload_summary,
    retrieval_traces,
    unit_entities,
    unit_versions,
    units,
)
from tests.core.test_memory_flow import (
    FACTS,
    NOW,
    REPLY,
    TRAILER,
    TRAILER_MARKER,
    USER,
    full_turn_outputs,
    j,
    run_turn,  # the spec's three extraction calls, the background job inline
)

SECOND = "今日もラーメンを食べたよ。やっぱり大好き。"
EMPTY = [j({"entities": [], "relations": []})]


@pytest.fixture
def store(tmp_path: Path, engine: Engine):  # type: ignore[no-untyped-def]
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    return repo, memory_collection(open_chroma(tmp_path), LOCAL_PERSON)


def count(repo: MemoryRepository, table, *where) -> int:  # type: ignore[no-untyped-def]
    with repo.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar() or 0)


def two_turns(repo: MemoryRepository, collection) -> None:  # type: ignore[no-untyped-def]
    """Turn 1 (episode 1: entities, edge, fact, loop, bond + person summaries); turn 2 (episode with the
    same fact, so the fact has two evidence episodes; its Q2 quotes turn 1)."""
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    second = ReplayClient(
        ["そうなんですね" + "\n" + TRAILER_MARKER + "\n" + j(TRAILER), *EMPTY, j(FACTS), j({"loops": []})]
    )
    history = [{"role": "user", "content": USER}, {"role": "assistant", "content": REPLY}]
    run_turn(repo, collection, second, history, SECOND, NOW + 60)


def test_hard_delete_of_an_episode_leaves_nothing_behind(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    with repo.connect() as conn:
        fact_id = conn.execute(select(payload_fact.c.unit_id)).scalar_one()
        loop_id = conn.execute(select(payload_loop.c.unit_id)).scalar_one()
        summary_ids = list(conn.execute(select(payload_summary.c.unit_id)).scalars())
    assert collection.get(ids=["1"])["ids"] == ["1"] and count(repo, edges) == 1
    # the log: 3 extraction steps, 2 summaries and the end of the background job, all on this episode
    assert count(repo, retrieval_traces) == 1 and count(repo, extraction_log) == 3 + 2 + 1
    report = hard_delete(repo, collection, 1)
    doomed = [1, loop_id, fact_id, *summary_ids]
    assert sorted(report.unit_ids) == sorted(doomed)  # everything came from this one episode
    with repo.connect() as conn:
        for uid in doomed:
            assert fts_count(conn, FTS_TRIGRAM, uid) == 0 and fts_count(conn, FTS_BIGRAM, uid) == 0
            assert fts_count(conn, FTS_LEXICAL, uid) == 0
    assert collection.get(ids=[str(u) for u in doomed])["ids"] == []
    for table in (units, unit_entities, edges, retrieval_traces, extraction_log, unit_versions, entities):
        assert count(repo, table) == 0, table.name
    assert count(repo, entity_aliases) == 0
    assert report.traces == 1 and report.entities == 3  # SPEAKER, 田中, 新宿


def test_hard_delete_keeps_what_other_episodes_still_support(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    two_turns(repo, collection)
    with repo.connect() as conn:
        fact_id, evidence = conn.execute(
            select(payload_fact.c.unit_id, payload_fact.c.evidence_unit_ids_json)
        ).one()
        second_id = conn.execute(select(func.max(units.c.id)).where(units.c.kind == "EPISODE")).scalar_one()
    assert json.loads(evidence) == [1, second_id]
    assert count(repo, retrieval_traces) == 2
    report = hard_delete(repo, collection, 1)
    assert fact_id not in report.unit_ids
    with repo.connect() as conn:
        assert json.loads(
            conn.execute(
                select(payload_fact.c.evidence_unit_ids_json).where(payload_fact.c.unit_id == fact_id)
            ).scalar_one()
        ) == [second_id]
        # The second turn's trace quoted episode 1 in its Q2: gone too. No trace mentions the text.
        assert conn.execute(select(retrieval_traces.c.q2)).all() == []
    assert report.traces == 2
    # SPEAKER is still the fact's subject: kept. 田中 and 新宿 were only in episode 1: gone.
    with repo.connect() as conn:
        assert list(conn.execute(select(entities.c.name)).scalars()) == ["SPEAKER"]


def test_hard_delete_removes_the_episode_from_summary_key_events(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    two_turns(repo, collection)
    with repo.begin() as conn:
        bond_id = conn.execute(
            select(payload_summary.c.unit_id).where(payload_summary.c.scope_label == "bond")
        ).scalar_one()
        conn.execute(
            payload_summary.update()
            .where(payload_summary.c.unit_id == bond_id)
            .values(
                evidence_unit_ids_json="[1, 9]",
                summary_json=j(
                    {
                        "summary_text": "x",
                        "key_events": [{"unit_id": 1, "why": "a"}, {"unit_id": 9, "why": "b"}],
                    }
                ),
            )
        )
    report = hard_delete(repo, collection, 1)
    assert bond_id not in report.unit_ids
    with repo.connect() as conn:
        row = conn.execute(
            select(payload_summary.c.evidence_unit_ids_json, payload_summary.c.summary_json).where(
                payload_summary.c.unit_id == bond_id
            )
        ).one()
    assert json.loads(row[0]) == [9]
    assert json.loads(row[1])["key_events"] == [{"unit_id": 9, "why": "b"}]


def test_hard_delete_of_a_missing_unit_is_a_no_op(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    assert hard_delete(repo, collection, 42).unit_ids == []


def test_editing_a_deleted_unit_is_a_japanese_edit_error(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    with pytest.raises(EditError, match="記憶 #1 に版 v9 はありません"):
        revert_unit(repo, collection, 1, 9, NOW + 1)
    hard_delete(repo, collection, 1)
    with pytest.raises(EditError, match=r"記憶 #1 が見つかりません"):
        edit_unit(repo, collection, 1, {"salience": 0.1}, NOW + 2)
