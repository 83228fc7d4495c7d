"""Issue 12's tables and lanes are each person's own (issue #14), on SQLite and PostgreSQL: the lexical memory
lane, entity resolution / rename / merge, stored diagnosis sessions, booking details and the stored reply of a
cut review turn never reach another person; the knowledge base's search keys stay shared with its authors.

Every test drives the functions the pages call, as Alice and as Bob, on one database.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, create_engine, delete, select, text

from core.flows import review_chat
from core.flows.diagnosis.booking import list_bookings, team_bookings
from core.flows.diagnosis.deps import open_deps, session_archive
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.knowledge import base as kb
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.entities import EntityEditError, merge_entities, rename_entity
from core.flows.memory.graph import link_unit_entity, upsert_entity
from core.flows.memory.indexing import index_units
from core.flows.memory.lanes import entity_lane, entity_names, keyword_lanes
from core.flows.memory.retrieval import retrieve
from core.flows.memory.stores import memory_repository
from core.llm.base import LLMReply
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.db import init_db
from core.store.diagnosis import DiagnosisRepository, diagnosis_sessions
from core.store.knowledge.entries import knowledge_entry_keys
from core.store.knowledge.search import backfill_keys
from core.store.memory.keyword_lanes import FTS_LEXICAL, backfill_lexical
from core.store.memory.lanes_pg import LANES, docs
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import entities, entity_aliases
from tests.core.diagnosis_fixtures import NOW_TS, diag
from tests.core.test_review_messages import REVIEW
from tests.persons import ADMIN, ALICE, BOB

NOW = 1_795_000_000


def clear_lexical(conn: Connection) -> None:
    """Forget the lexical lane's rows (as in a database indexed before the lane existed)."""
    if conn.dialect.name == "sqlite":
        conn.execute(text(f"DELETE FROM {FTS_LEXICAL}"))
    else:
        conn.execute(delete(docs).where(docs.c.lane == LANES[FTS_LEXICAL]))


# --- memory: the lexical lane and entities ------------------------------------------------------------------


def remember(repo: MemoryRepository, said: str) -> int:
    with repo.begin() as conn:
        uid = repo.save_episode(
            said,
            "そうなんですね。",
            {"salience": 0.5},
            source="test",
            occurred_at=NOW - 60,
            now=NOW - 60,
            conn=conn,
        )
        index_units(conn, None, [uid])
    return uid


def lexical(repo: MemoryRepository, query: str) -> list[int]:
    with repo.connect() as conn:
        return [u for u, _ in keyword_lanes(conn, repo.owner_id, query, 5)["lexical"]]


def test_the_lexical_lane_finds_only_the_persons_own_units(engine: Engine) -> None:
    alice, bob = memory_repository(engine, ALICE, lambda: NOW), memory_repository(engine, BOB, lambda: NOW)
    cat = remember(alice, "うちのねこが最近ごはんを残すんだ。")
    remember(bob, "新宿でラーメンを食べた。")
    assert lexical(alice, "ねこ、元気になったよ") == [cat]
    assert lexical(bob, "ねこ、元気になったよ") == []  # Alice's row is in the table, never in Bob's hits
    assert cat not in [c.unit_id for c in retrieve(bob, None, [], "ねこ、元気になったよ", NOW).selected]
    assert cat in [c.unit_id for c in retrieve(alice, None, [], "ねこ、元気になったよ", NOW).selected]
    # the upgrade backfill keys rows by unit id: they stay the person's
    with alice.begin() as conn:
        clear_lexical(conn)
        assert backfill_lexical(conn) == 2  # migration v0007's backfill
    assert lexical(alice, "ねこ") == [cat] and lexical(bob, "ねこ") == []


def test_names_resolve_and_match_within_the_persons_own_entities(engine: Engine) -> None:
    alice, bob = memory_repository(engine, ALICE, lambda: NOW), memory_repository(engine, BOB, lambda: NOW)
    uid = remember(alice, "田中さんとランチ。")
    with alice.begin() as conn:
        tanaka = upsert_entity(
            conn, ALICE.id, {"type_label": "PERSON", "name": "田中さん", "aliases": []}, NOW
        )
        link_unit_entity(conn, uid, tanaka)
        assert upsert_entity(conn, ALICE.id, {"type_label": "PERSON", "name": "田中様"}, NOW) == tanaka
        # Bob's 「田中くん」 is a person of his own, not Alice's 田中 under another honorific
        bobs = upsert_entity(conn, BOB.id, {"type_label": "PERSON", "name": "田中くん", "aliases": []}, NOW)
        assert bobs != tanaka
        assert conn.execute(select(entities.c.owner_id).where(entities.c.id == bobs)).scalar() == BOB.id
        assert {e for _, e, _ in entity_names(conn, BOB.id)} == {bobs}
        assert entity_lane(conn, BOB.id, "田中さんは元気？", 5, entity_names(conn, BOB.id))[1] == []
        matched, hits = entity_lane(conn, ALICE.id, "田中くんは元気？", 5, entity_names(conn, ALICE.id))
    assert [e for _, e in matched] == [tanaka] and [u for u, _ in hits] == [uid]
    assert bob.owner_id == BOB.id


def test_rename_and_merge_only_touch_the_persons_own_entities(engine: Engine) -> None:
    alice, bob = memory_repository(engine, ALICE, lambda: NOW), memory_repository(engine, BOB, lambda: NOW)
    with alice.begin() as conn:
        hers = upsert_entity(conn, ALICE.id, {"type_label": "PERSON", "name": "佐藤", "aliases": []}, NOW)
        his = upsert_entity(conn, BOB.id, {"type_label": "PERSON", "name": "たなっち", "aliases": []}, NOW)
        his_too = upsert_entity(conn, BOB.id, {"type_label": "PERSON", "name": "鈴木", "aliases": []}, NOW)
    with pytest.raises(EntityEditError, match="見つかりません"):
        rename_entity(bob, hers, "乗っ取り")
    with pytest.raises(EntityEditError, match="見つかりません"):
        merge_entities(bob, his, [hers])
    with pytest.raises(EntityEditError, match="見つかりません"):
        merge_entities(alice, hers, [his])
    # a name Alice uses is free for Bob: the clash check is within his own entities
    assert rename_entity(bob, his, "佐藤") == "佐藤"
    report = merge_entities(bob, his, [his_too])
    assert report.merged == [his_too] and report.aliases_added == ["鈴木"]
    with alice.connect() as conn:
        row = conn.execute(select(entities.c.name, entities.c.owner_id).where(entities.c.id == hers)).one()
        assert tuple(row) == ("佐藤", ALICE.id)
        assert (
            list(conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == hers))) == []
        )


# --- diagnosis: stored sessions and booking details --------------------------------------------------------


def alice_session(engine: Engine) -> str:
    deps = open_deps(ReplayClient([diag(message="いつ音がしますか？")]), engine, ALICE, clock=lambda: NOW_TS)
    service = ChatService()
    session, _ = run_turn(
        service, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"), deps
    )
    for request in (
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="ドアがきしむ"),
    ):
        request.session_id = session.session_id
        run_turn(service, request, deps)
    return session.session_id


def test_a_stored_session_loads_only_for_its_person(engine: Engine) -> None:
    sid = alice_session(engine)

    def clock() -> int:
        return NOW_TS + 60

    with engine.connect() as conn:
        assert conn.execute(select(diagnosis_sessions.c.owner_id)).scalars().all() == [ALICE.id]
    bobs_archive = session_archive(engine, BOB, clock)
    assert bobs_archive.load_session(sid) is None
    # Bob opens ?diagnosis=<Alice's id> after a server restart: not found, a new session of his own
    bobs = ChatService().session(sid, BOB.id, bobs_archive)
    assert bobs.session_id != sid and bobs.owner_id == BOB.id
    assert bobs.current_step == ChatStep.VEHICLE_ID and bobs.conversation_history == []
    # a turn Bob sends with her id runs in a session of his own and leaves hers alone
    deps = open_deps(ReplayClient([]), engine, BOB, clock=clock)
    mine, _ = run_turn(
        ChatService(), ChatRequest(sid, action="select_vehicle", action_value="minato-soleil-2022"), deps
    )
    assert mine.session_id != sid and mine.owner_id == BOB.id
    # his restart and delete do not forget her session
    ChatService().restart(sid, BOB.id, bobs_archive)
    bobs_archive.delete_session(sid)
    back = ChatService().session(sid, ALICE.id, session_archive(engine, ALICE, clock))
    assert back.session_id == sid and back.owner_id == ALICE.id
    assert "ドアがきしむ" in [i["content"] for i in back.conversation_history]
    with engine.connect() as conn:
        owners = dict(
            conn.execute(select(diagnosis_sessions.c.session_id, diagnosis_sessions.c.owner_id)).all()
        )
    assert owners == {sid: ALICE.id, mine.session_id: BOB.id}


def test_booking_details_are_read_only_through_their_persons_booking(engine: Engine) -> None:
    details = {
        "symptoms": ["エンジンをかけるとキュルキュル鳴る", "走行中"],
        "answers": [{"question": "いつ音がしますか？", "answer": "走行中"}],
        "summary": "走行中にベルト鳴き。",
        "manual_coverage": "partially_covered",
    }
    booking = {"booking_type": "visit", "name": "顧客一郎", "phone": "090-1111-2222", **details}
    booking_id = DiagnosisRepository(engine, owner_id=ALICE.id).save_booking(booking)
    [row] = list_bookings(engine, ALICE)
    assert {k: row[k] for k in details} == details
    assert list_bookings(engine, BOB) == []
    assert DiagnosisRepository(engine, owner_id=BOB.id).get_booking(booking_id) is None
    assert team_bookings(engine, BOB) is None
    team = team_bookings(engine, ADMIN)
    assert team is not None and [(r["owner_id"], r["answers"]) for r in team] == [
        (ALICE.id, details["answers"])
    ]


def test_sessions_stored_before_people_belong_to_the_local_person(tmp_path: Path) -> None:
    old = create_engine(f"sqlite:///{tmp_path / 'app.db'}")
    with old.begin() as conn:
        conn.execute(
            text(
                "CREATE TABLE diagnosis_sessions (session_id VARCHAR(64) PRIMARY KEY, state TEXT NOT NULL,"
                " updated_at INTEGER NOT NULL)"
            )
        )
        conn.execute(
            text("INSERT INTO diagnosis_sessions VALUES ('old', :s, :t)"),
            {"s": json.dumps({"session_id": "old", "current_step": "vehicle_id"}), "t": NOW_TS},
        )
    old.dispose()
    engine = open_store(tmp_path)
    init_db(engine)  # idempotent

    def clock() -> int:
        return NOW_TS

    assert session_archive(engine, LOCAL_PERSON, clock).load_session("old") is not None
    assert session_archive(engine, BOB, clock).load_session("old") is None


# --- review: the stored reply of a cut turn ----------------------------------------------------------------


def test_another_person_cannot_continue_or_discard_a_stored_cut_reply(engine: Engine) -> None:
    alice, bob = review_chat.repository(engine, ALICE), review_chat.repository(engine, BOB)
    imported = review_chat.import_review(alice, json.dumps(REVIEW.to_json_dict()).encode())
    assert imported.review_id is not None
    review = alice.get_review(imported.review_id)
    assert review is not None
    cut = LLMReply(text="講評では、§3 について", finish_reason="length", provider="replay", model="replay")
    result = review_chat.run_turn(alice, ReplayClient([cut]), review, None, [], "§3 はどうですか")
    thread = result.thread_id
    assert thread is not None and result.items[-1]["status"] == "truncated"
    items = copy.deepcopy(result.items)  # what Bob's page would hold
    assert not bob.update_reply(thread, 1, "乗っ取り", {})
    assert review_chat.continue_reply(bob, ReplayClient(["の続き"]), review, thread, items) is None
    assert review_chat.discard_cut_turn(bob, thread, copy.deepcopy(result.items)) is not None
    assert [m.content for m in alice.load_messages(thread)] == ["§3 はどうですか", "講評では、§3 について"]


# --- the shared knowledge base ------------------------------------------------------------------------------


def test_knowledge_search_keys_are_shared_and_results_name_their_authors(engine: Engine) -> None:
    alice, bob = knowledge_stores(engine, ALICE), knowledge_stores(engine, BOB)
    entry = {
        "contract_type": "業務委託契約",
        "knowledge_title": "締め切りの定め",
        "target_clause": "第８条（納期）",
        "review_points": "納期の延長条件",
        "action_plan": "延長の手続を定める",
        "clause_sample": "納期は別途定める。",
    }
    entry_id, _ = kb.save_draft(alice.base, entry, by=ALICE, interview_id=None, saved_entry_id=None)
    kb.edit_entry(bob.base, entry_id, {**entry, "review_points": "違約金の定め"}, by=BOB)
    for base in (alice.base, bob.base):
        [hit] = kb.find_entries(base, search="締切、第8条")
        assert (hit["id"], hit["created_by_id"], hit["updated_by_id"]) == (entry_id, ALICE.id, BOB.id)
        assert [e["id"] for e in kb.find_entries(base, search="違約金")] == [entry_id]
    with engine.begin() as conn:
        conn.execute(delete(knowledge_entry_keys))
        assert backfill_keys(conn) == 1  # migration v0007's backfill keys entries that carry their authors
    [hit] = kb.find_entries(bob.base, search="締め切り 違約金")
    assert (hit["created_by"], hit["updated_by"]) == (ALICE.name, BOB.name)
