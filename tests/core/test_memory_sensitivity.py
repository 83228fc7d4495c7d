"""Sensitivity (issue 5 store field; our rule): secret units (2) are never injected into a chat turn; private
units (1) are. The search test and the trace show them as excluded."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, select

from core.flows.memory.constants import INJECT_MAX_SENSITIVITY
from core.flows.memory.retrieval import format_pack, retrieve
from core.flows.memory.stores import memory_collection
from core.flows.memory.versions import edit_unit
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import payload_fact, payload_loop, payload_summary
from tests.core.test_memory_flow import NOW, USER, full_turn_outputs, run_turn  # spec's 3 extraction calls

QUERY = "田中さんとのラーメンの話、覚えてる？"


def test_secret_units_are_never_injected(tmp_path: Path, engine: Engine) -> None:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)
    collection = memory_collection(open_chroma(tmp_path), LOCAL_PERSON)
    run_turn(repo, collection, ReplayClient(full_turn_outputs()), [], USER, NOW)
    with repo.connect() as conn:
        others = [
            *conn.execute(select(payload_fact.c.unit_id)).scalars(),
            *conn.execute(select(payload_loop.c.unit_id)).scalars(),
            *conn.execute(select(payload_summary.c.unit_id)).scalars(),
        ]
    before = retrieve(repo, collection, [], QUERY, NOW + 60)
    assert 1 in [c.unit_id for c in before.selected] and before.facts and before.loops and before.bond
    assert INJECT_MAX_SENSITIVITY == 1

    for uid in [1, *others]:
        edit_unit(repo, collection, uid, {"sensitivity": 2}, NOW + 1)
    secret = retrieve(repo, collection, [], QUERY, NOW + 60)
    assert secret.selected == [] and secret.facts == [] and secret.loops == [] and secret.bond is None
    decisions = {c.unit_id: c.decision for c in secret.candidates}
    assert decisions[1] == "sensitive"
    assert format_pack(secret) == "（関連する記憶はありません）"
    assert secret.trace()["thresholds"]["inject_max_sensitivity"] == 1

    for uid in [1, *others]:
        edit_unit(repo, collection, uid, {"sensitivity": 1}, NOW + 2)
    private = retrieve(repo, collection, [], QUERY, NOW + 60)
    assert 1 in [c.unit_id for c in private.selected] and private.facts and private.loops and private.bond
