"""No lost updates (issues #14 item 5 and #15): version numbers come from the database, and an edit made on
stale data is refused with both versions, on SQLite and PostgreSQL.

The full 400 saves (3 processes x 6 threads) run in tests/bench/team.py; here 3 x 6 x 4 keep make test fast.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest
from sqlalchemy import Engine

from core.flows.knowledge import base as kb
from core.flows.memory.browse import Filters, units_frame
from core.flows.memory.edits import apply_edits, overwrite_stale, stale_comparison
from core.flows.memory.versions import EditError, StaleEdit, edit_unit, versions_of
from core.people import LOCAL_PERSON, Person
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.memory.repository import MemoryRepository
from tests.core.store_workers import start_together
from tests.persons import ALICE, BOB

PROCESSES, THREADS, SAVES = 3, 6, 4
NOW = 1_795_000_000


YAMADA = Person("yamada", "山田")


def _entry(title: str) -> dict[str, str]:
    return {**dict.fromkeys(ENTRY_FIELDS, "本文"), "knowledge_title": title}


def _url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def test_concurrent_knowledge_saves_get_unique_contiguous_versions(engine: Engine) -> None:
    base = KnowledgeBaseRepository(engine)
    entry_id = base.save_entry(_entry("同時保存"), by=ALICE)
    results = start_together(_url(engine), PROCESSES, "kb-save", str(entry_id), str(THREADS), str(SAVES))
    assert [r["errors"] for r in results] == [[]] * PROCESSES
    saved = sum(int(str(r["ok"])) for r in results)
    assert saved == PROCESSES * THREADS * SAVES
    versions = [v["version"] for v in base.entry_versions(entry_id)]
    assert versions == list(range(1, saved + 2))  # unique and contiguous: nothing lost, nothing doubled
    assert base.get_entry(entry_id)["version"] == saved + 1  # type: ignore[index]


def test_concurrent_memory_edits_get_unique_contiguous_versions(engine: Engine) -> None:
    repo = MemoryRepository(engine, lambda: NOW, owner_id=LOCAL_PERSON.id)
    unit_id = repo.save_episode("最初", "返答", {}, source="default")
    results = start_together(_url(engine), PROCESSES, "memory-edit", str(unit_id), str(THREADS), str(SAVES))
    assert [r["errors"] for r in results] == [[]] * PROCESSES
    versions = [v.version for v in versions_of(repo, unit_id)]
    assert versions == list(range(1, PROCESSES * THREADS * SAVES + 2))


def test_the_second_knowledge_editor_is_told_and_sees_both_versions(engine: Engine) -> None:
    base = KnowledgeBaseRepository(engine, lambda: NOW)
    entry_id = base.save_entry(_entry("元の題"), by=YAMADA)
    opened = base.get_entry(entry_id)
    assert opened is not None and opened["version"] == 1
    assert kb.edit_entry(base, entry_id, _entry("Aの題"), by=ALICE, expected_version=1) == 2
    with pytest.raises(kb.StaleEntryError) as caught:
        kb.edit_entry(base, entry_id, _entry("Bの題"), by=BOB, expected_version=1)
    stale = caught.value
    current = stale.current
    assert (current["knowledge_title"], current["version"], current["updated_by"]) == ("Aの題", 2, ALICE.name)
    assert current["updated_by_id"] == ALICE.id  # who saved meanwhile, by id as well as by name
    assert stale.mine["knowledge_title"] == "Bの題" and stale.expected_version == 1
    assert [v["knowledge_title"] for v in base.entry_versions(entry_id)] == [
        "元の題",
        "Aの題",
    ]  # nothing written
    assert kb.edit_entry(base, entry_id, stale.mine, by=BOB, expected_version=2) == 3  # B chose to overwrite
    with pytest.raises(kb.StaleEntryError):  # A, still on version 2, is told in turn
        kb.edit_entry(base, entry_id, _entry("Aの再編集"), by=ALICE, expected_version=2)
    versions = base.entry_versions(entry_id)
    assert [v["edited_by"] for v in versions] == ["山田", ALICE.name, BOB.name]
    assert [v["edited_by_id"] for v in versions] == [YAMADA.id, ALICE.id, BOB.id]
    assert base.get_entry(entry_id)["updated_by_id"] == BOB.id  # type: ignore[index]


def test_saving_what_is_already_stored_is_no_change_even_if_stale(engine: Engine) -> None:
    base = KnowledgeBaseRepository(engine, lambda: NOW)
    entry_id = base.save_entry(_entry("題"), by=ALICE)
    base.update_entry(entry_id, _entry("新しい題"), by=ALICE)
    assert kb.edit_entry(base, entry_id, _entry("新しい題"), by=BOB, expected_version=1) == 2


def test_a_draft_saved_again_after_someone_edited_the_entry_is_refused(engine: Engine) -> None:
    base = KnowledgeBaseRepository(engine, lambda: NOW)
    entry_id, version = kb.save_draft(base, _entry("草案"), by=ALICE, interview_id="i1", saved_entry_id=None)
    kb.edit_entry(base, entry_id, _entry("Bが直した"), by=BOB, expected_version=version)
    with pytest.raises(kb.StaleEntryError):
        kb.save_draft(
            base,
            _entry("草案の続き"),
            by=ALICE,
            interview_id="i1",
            saved_entry_id=entry_id,
            saved_version=version,
        )
    assert kb.save_draft(
        base, _entry("草案の続き"), by=ALICE, interview_id="i1", saved_entry_id=entry_id
    ) == (
        entry_id,
        3,
    )


@pytest.fixture
def grid(engine: Engine) -> Callable[[], pd.DataFrame]:
    repo = MemoryRepository(engine, lambda: NOW, owner_id=LOCAL_PERSON.id)
    for text in ("一つ目", "二つ目"):
        repo.save_episode(text, "返答", {}, source="default", occurred_at=NOW)
    return lambda: units_frame(repo, "EPISODE", Filters())[0]


def test_a_grid_edit_on_a_unit_changed_since_is_refused_with_both_states(
    engine: Engine, grid: Callable[[], pd.DataFrame]
) -> None:
    repo = MemoryRepository(engine, lambda: NOW, owner_id=LOCAL_PERSON.id)
    seen = grid()  # what the person has on screen
    assert list(seen["version"]) == [1, 1]
    edit_unit(repo, None, 1, {"reply_text": "別の人の編集"}, NOW + 1)  # someone else, meanwhile
    mine = seen.copy()
    mine.loc[mine["id"] == 1, "input_text"] = "私の編集"
    mine.loc[mine["id"] == 2, "input_text"] = "二つ目（私）"
    with pytest.raises(StaleEdit) as caught:
        apply_edits(repo, None, "EPISODE", seen, mine, NOW + 2)
    err = caught.value
    assert err.saved == {2: 2}  # the unit nobody else touched is saved
    (stale,) = err.stale
    assert (stale.unit_id, stale.expected_version, stale.current_version) == (1, 1, 2)
    assert stale.current["reply_text"] == "別の人の編集" and stale.mine == {"input_text": "私の編集"}
    assert "表を開いた後" in str(err)
    table = stale_comparison(stale, {"input_text": "ユーザー"})
    assert table.to_dict("records") == [
        {"項目": "ユーザー", "あなたの編集": "私の編集", "現在の内容": "一つ目"}
    ]
    assert [v.version for v in versions_of(repo, 1)] == [1, 2]  # nothing written for the stale row
    assert overwrite_stale(repo, None, stale, NOW + 3) == 3
    snapshot = versions_of(repo, 1)[-1].snapshot
    assert (snapshot["input_text"], snapshot["reply_text"]) == ("私の編集", "別の人の編集")


def test_a_stale_check_never_reaches_another_persons_unit(
    engine: Engine, grid: Callable[[], pd.DataFrame]
) -> None:
    seen = grid()
    bob = MemoryRepository(engine, lambda: NOW, owner_id=BOB.id)
    assert units_frame(bob, "EPISODE", Filters())[0].empty  # the grid reads only the person's units
    with pytest.raises(EditError, match="見つかりません"):  # another person's unit reads as unknown
        edit_unit(bob, None, 1, {"input_text": "ボブ"}, NOW + 1, expected_version=1)
    with pytest.raises(EditError, match="見つかりません"):
        apply_edits(bob, None, "EPISODE", seen, seen.assign(input_text="ボブ"), NOW + 1)
    assert [v.version for v in versions_of(_local(engine), 1)] == [1]  # nothing written


def _local(engine: Engine) -> MemoryRepository:
    return MemoryRepository(engine, lambda: NOW, owner_id=LOCAL_PERSON.id)


def test_a_fresh_grid_saves_as_before(engine: Engine, grid: Callable[[], pd.DataFrame]) -> None:
    repo = MemoryRepository(engine, lambda: NOW, owner_id=LOCAL_PERSON.id)
    seen = grid()
    mine = seen.copy()
    mine.loc[mine["id"] == 1, "salience"] = 0.9
    assert apply_edits(repo, None, "EPISODE", seen, mine, NOW + 1) == {1: 2}
    assert apply_edits(repo, None, "EPISODE", grid(), grid(), NOW + 2) == {}
