"""Alembic migrations (issue #14): the schema they build is what the code declares, on both engines; processes
starting at once migrate once; a database made by the create_all-era code (commit dee2926) is brought to head
with its rows; duplicated knowledge versions written by the old code are renumbered."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, inspect, select, text

from core.people import LOCAL_PERSON, Person
from core.store import init_db, make_engine, open_store
from core.store.db import schema_differences
from core.store.diagnosis import DiagnosisRepository
from core.store.knowledge.entries import (
    KnowledgeBaseRepository,
    knowledge_entries,
    knowledge_entry_versions,
)
from core.store.memory.keyword_lanes import FTS_LEXICAL, FTS_TRIGRAM, fts_search
from core.store.migrate import current_revision, head_revision, main
from core.store.review.repository import ReviewRepository
from tests.core.store_workers import start_together
from tests.servers import PgCluster

ROOT = Path(__file__).resolve().parents[2]
LEGACY = ROOT / "tests" / "data" / "legacy_main_dee2926.db"  # built by the create_all-era code, see below
STARTERS = 4


def test_a_new_database_is_at_head_and_matches_the_declared_tables(engine: Engine) -> None:
    assert current_revision(engine) == head_revision()
    assert schema_differences(engine) == []
    init_db(engine)  # again: nothing to do
    assert current_revision(engine) == head_revision()


def test_the_lexical_tables_belong_to_their_engine(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    if engine.dialect.name == "sqlite":
        assert {"memory_fts_trigram", "memory_fts_bigram", "memory_fts_lexical"} <= tables
        assert "memory_lex_docs" not in tables
    else:
        assert "memory_lex_docs" in tables and "memory_fts_trigram" not in tables
        with engine.connect() as conn:
            indexes = conn.execute(
                text("SELECT indexname FROM pg_indexes WHERE indexname LIKE :p"), {"p": "%trgm"}
            )
            assert set(indexes.scalars()) == {
                "ix_memory_lex_docs_body_trgm",
                "ix_knowledge_entry_keys_folded_trgm",
                "ix_knowledge_entry_keys_lexical_trgm",
            }


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_processes_starting_at_once_migrate_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'app.db'}"
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        url = cluster.url(cluster.create_database())
    results = start_together(url, STARTERS, "init")
    assert [r["errors"] for r in results] == [[]] * STARTERS
    engine = make_engine(url=url)
    assert current_revision(engine) == head_revision()
    assert schema_differences(engine) == []
    engine.dispose()


@pytest.fixture
def legacy(tmp_path: Path) -> Engine:
    """A copy of the database the create_all-era code wrote (every flow has rows; see build notes below)."""
    shutil.copy(LEGACY, tmp_path / "app.db")
    return make_engine(tmp_path)


def test_a_database_from_the_create_all_era_is_brought_to_head_with_its_rows(legacy: Engine) -> None:
    assert current_revision(legacy) is None
    init_db(legacy)
    assert current_revision(legacy) == head_revision()
    assert schema_differences(legacy) == []
    assert "schema_version" not in inspect(legacy).get_table_names()
    base = KnowledgeBaseRepository(legacy)
    (entry,) = base.list_entries()
    assert (entry["knowledge_title"], entry["version"]) == ("損害賠償の上限（改）", 2)
    assert [v["version"] for v in base.entry_versions(entry["id"])] == [1, 2]
    assert [e["id"] for e in base.list_entries(search="損害賠償")] == [entry["id"]]  # search keys backfilled
    assert [e["id"] for e in base.list_entries(search="損害 上限")] == [entry["id"]]  # terms ANDed
    # versions written before there were people keep the name typed then and are the local person's
    assert (entry["created_by"], entry["created_by_id"], entry["updated_by_id"]) == ("山田", "local", "local")
    assert {v["edited_by_id"] for v in base.entry_versions(entry["id"])} == {"local"}
    by = Person("sato", "佐藤")
    assert base.update_entry(entry["id"], {**entry, "action_plan": "再修正"}, by=by, expected_version=2) == 3
    assert base.get_entry(entry["id"])["updated_by_id"] == "sato"  # type: ignore[index]
    threads = ReviewRepository(legacy, owner_id=LOCAL_PERSON.id).list_threads(1)
    assert [t["turns"] for t in threads] == [1]
    assert ReviewRepository(legacy, owner_id="someone-else").list_threads(1) == []
    with legacy.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM memory_units")).scalar() == 5
        owners = conn.execute(text("SELECT DISTINCT owner_id FROM memory_units")).scalars().all()
        assert owners == [LOCAL_PERSON.id]  # every older memory is the local person's
        assert fts_search(
            conn, FTS_TRIGRAM, ["ラーメン"], 5, LOCAL_PERSON.id
        )  # the FTS5 tables kept their rows
        assert not fts_search(conn, FTS_TRIGRAM, ["ラーメン"], 5, "someone-else")
        lexical = conn.execute(text("SELECT count(*) FROM memory_fts_lexical")).scalar()
        assert lexical == conn.execute(text("SELECT count(*) FROM memory_fts_trigram")).scalar()  # backfilled
    init_db(legacy)
    assert current_revision(legacy) == head_revision()


def test_duplicated_knowledge_versions_from_the_old_code_are_renumbered(legacy: Engine) -> None:
    database = legacy.url.database
    assert database is not None
    with sqlite3.connect(database) as conn:  # what concurrent saves of the old code left: 2, 2, 3, 3
        for version in (2, 3, 3):
            conn.execute(
                "INSERT INTO knowledge_entry_versions (entry_id, version, contract_type, knowledge_title,"
                " target_clause, review_points, action_plan, clause_sample, edited_at, edited_by, note)"
                " VALUES (1, ?, 'c', 't', 'x', 'r', 'a', 's', 0, 'x', '')",
                (version,),
            )
    init_db(legacy)
    with legacy.connect() as conn:
        rows = conn.execute(
            select(knowledge_entry_versions.c.version, knowledge_entry_versions.c.id)
            .where(knowledge_entry_versions.c.entry_id == 1)
            .order_by(knowledge_entry_versions.c.id)
        ).all()
        assert [r.version for r in rows] == [1, 2, 3, 4, 5]  # every row kept, in the order written
        assert conn.execute(select(knowledge_entries.c.version)).scalar() == 5
        assert conn.execute(select(func.count()).select_from(knowledge_entry_versions)).scalar() == 5


def test_migrate_command_names_the_head(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["heads"]) == 0
    assert capsys.readouterr().out.strip() == head_revision()
    assert main([]) == 2


def test_open_store_on_a_url(tmp_path: Path) -> None:
    engine = open_store(url=f"sqlite:///{tmp_path / 'other.db'}")
    assert current_revision(engine) == head_revision() and (tmp_path / "other.db").exists()


# How tests/data/legacy_main_dee2926.db was built, with the code of commit dee2926 (before Alembic):
# open_store(tmp); a knowledge interview with one failed turn; a knowledge entry saved by 山田 and edited by
# 佐藤 (v2); the sample review with one thread and one rally; one diagnosis booking; one memory turn with
# the demo model and the spec's three extraction calls (5 units); then VACUUM.


MAIN_PEOPLE = ROOT / "tests" / "data" / "legacy_main_61254f0.db"  # main after issues #12, #14 A and #15


@pytest.fixture
def main_people(tmp_path: Path) -> Engine:
    """A copy of a database main's create_all + upgrade-hook code wrote (commit 61254f0): owners, people,
    knowledge_entry_keys, the FTS5 lexical lane and a stored diagnosis session already there."""
    shutil.copy(MAIN_PEOPLE, tmp_path / "app.db")
    return make_engine(tmp_path)


def test_a_database_from_main_with_people_is_brought_to_head_with_its_rows_and_owners(
    main_people: Engine,
) -> None:
    assert current_revision(main_people) is None
    init_db(main_people)
    assert current_revision(main_people) == head_revision()
    assert schema_differences(main_people) == []
    alice_id = "https://idp.example|alice"
    base = KnowledgeBaseRepository(main_people)
    (entry,) = base.list_entries(search="締切、第8条")
    assert (entry["created_by_id"], entry["updated_by_id"], entry["version"]) == (alice_id, "local", 2)
    assert [e["id"] for e in base.list_entries(search="違約金 納期")] == [entry["id"]]
    with main_people.connect() as conn:
        owners = dict(
            conn.execute(text("SELECT owner_id, count(*) FROM memory_units GROUP BY owner_id")).all()
        )
        assert owners == {alice_id: 2, LOCAL_PERSON.id: 3}  # each person's memories stay theirs
        assert fts_search(conn, FTS_LEXICAL, ["ネコ"], 5, alice_id)  # the lexical lane kept its rows
        assert not fts_search(conn, FTS_LEXICAL, ["ネコ"], 5, LOCAL_PERSON.id)
        assert "search_text" not in {c["name"] for c in inspect(conn).get_columns("knowledge_entries")}
    # a session stored before sessions had versions is at version 1
    assert DiagnosisRepository(main_people, owner_id=alice_id).load_session("s1") == {
        "phase": "x",
        "store_version": 1,
    }
    assert DiagnosisRepository(main_people, owner_id=LOCAL_PERSON.id).load_session("s1") is None


# How tests/data/legacy_main_61254f0.db was built, with the code of commit 61254f0 (main before this merge):
# open_store(tmp); as Alice (https://idp.example|alice) a knowledge entry 締め切りの定め saved from a draft and
# edited by the local person (v2); a memory turn each for Alice (ねこ) and the local person (ラーメン) with the
# demo model and the spec's three extraction calls; Alice's diagnosis session "s1" = {"phase": "x"}; VACUUM.
