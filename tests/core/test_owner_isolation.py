"""Each person's own data (issue #14), with a real SQLite store: interviews, review threads and imports,
diagnosis sessions and bookings are never listed, opened, searched, written or exported for another person;
the knowledge base is shared and its versions name their author; admins see team counts.

Every test drives the functions the pages call, as Alice and as Bob, on one database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from core.flows import review_chat
from core.flows.diagnosis.booking import list_bookings, team_bookings
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.knowledge import analytics as ka
from core.flows.knowledge import base as kb
from core.flows.knowledge import export as kx
from core.flows.knowledge import interviews as ki
from core.flows.knowledge import turn as kt
from core.flows.knowledge.stores import knowledge_stores
from core.flows.registry import demo_client
from core.flows.roster import people_names, remember_person
from core.llm.replay import ReplayClient
from core.store import open_store
from core.store.diagnosis import DiagnosisRepository
from tests.core.test_review_messages import REVIEW
from tests.persons import ADMIN, ALICE, BOB

T0 = 1_795_255_200
ENTRY = {
    "contract_type": "業務委託契約",
    "knowledge_title": "損害賠償の上限",
    "target_clause": "第12条",
    "review_points": "上限額が委託料を下回らないか",
    "action_plan": "上限を委託料総額とする",
    "clause_sample": "損害賠償の総額は委託料総額を上限とする。",
}


def turn_json(message: str = "契約の種類を教えてください。") -> str:
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": "interview"},
            "state": {"phase": "collect_case", "missing_info": ["契約類型"]},
            "assistant_message": message,
            "knowledge_json": None,
        },
        ensure_ascii=False,
    )


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return open_store(tmp_path)


# --- knowledge interviews and the shared knowledge base -------------------------------------------------


def alice_interview(engine: Engine) -> str:
    stores = knowledge_stores(engine, ALICE, clock=lambda: T0)
    outcome = kt.run_turn(
        [],
        kt.TurnInput("アリスの案件：秘密保持契約の相談"),
        interview_id=None,
        client=ReplayClient([turn_json()]),
        repo=stores.interviews,
    )
    assert outcome.interview_id is not None
    return outcome.interview_id


def test_an_interview_is_listed_opened_and_written_only_for_its_person(engine: Engine) -> None:
    interview = alice_interview(engine)
    alice, bob = knowledge_stores(engine, ALICE), knowledge_stores(engine, BOB)
    assert [i["id"] for i in alice.interviews.list_interviews()] == [interview]
    assert ki.resume_interview(alice, interview) is not None
    assert bob.interviews.list_interviews() == []
    assert bob.interviews.interview_turns(interview) == []
    assert ki.resume_interview(bob, interview) is None  # the deep link ?interview=ID reads as not found
    assert ka.interview_overview(bob.interviews).progress == []
    with pytest.raises(KeyError):
        bob.interviews.record_turn(
            interview, turn_no=9, user_text="割り込み", raw="x", error_type="parse_error"
        )
    # a turn sent with another person's interview id starts the sender's own interview
    outcome = kt.run_turn(
        [],
        kt.TurnInput("ボブの案件"),
        interview_id=interview,
        client=ReplayClient([turn_json()]),
        repo=bob.interviews,
    )
    assert outcome.interview_id not in (None, interview)
    assert [t["user_text"] for t in alice.interviews.interview_turns(interview)] == [
        "アリスの案件：秘密保持契約の相談"
    ]


def test_the_knowledge_base_is_shared_and_every_version_names_its_author(engine: Engine) -> None:
    interview = alice_interview(engine)
    alice, bob = knowledge_stores(engine, ALICE), knowledge_stores(engine, BOB)
    entry_id, _ = kb.save_draft(alice.base, ENTRY, by=ALICE, interview_id=interview, saved_entry_id=None)
    assert [e["id"] for e in kb.find_entries(bob.base, search="損害賠償")] == [entry_id]
    assert kb.edit_entry(bob.base, entry_id, {**ENTRY, "action_plan": "上限を2倍にする"}, by=BOB) == 2
    versions = kb.entry_history(alice.base, entry_id)
    assert [(v["version"], v["edited_by"], v["edited_by_id"]) for v in versions] == [
        (1, ALICE.name, ALICE.id),
        (2, BOB.name, BOB.id),
    ]
    entry = bob.base.get_entry(entry_id)
    assert entry is not None
    assert (entry["created_by"], entry["created_by_id"], entry["updated_by"], entry["updated_by_id"]) == (
        ALICE.name,
        ALICE.id,
        BOB.name,
        BOB.id,
    )
    exported = json.loads(kx.entries_to_json(kb.find_entries(bob.base)))
    assert exported[0]["updated_by"] == BOB.name
    # the entry is shared, the interview it came from is not
    assert ki.resume_interview(bob, interview) is None


def test_team_analytics_are_for_admins_and_hold_counts_only(engine: Engine) -> None:
    alice_interview(engine)
    bob = knowledge_stores(engine, BOB)
    kt.run_turn(
        [],
        kt.TurnInput("ボブの案件"),
        interview_id=None,
        client=ReplayClient([turn_json()]),
        repo=bob.interviews,
    )
    assert ka.team_overview(bob.interviews, BOB) is None
    admin = knowledge_stores(engine, ADMIN)
    team = ka.team_overview(admin.interviews, ADMIN)
    assert team is not None and len(team.progress) == 2
    assert team.per_person == {
        ALICE.id: ka.PersonCounts(interviews=1, drafts=0),
        BOB.id: ka.PersonCounts(interviews=1, drafts=0),
    }
    assert team.stop_counts["collect_case"] == 2
    assert ka.interview_overview(admin.interviews).interviews == []  # an admin's own list is still their own
    assert remember_person(engine, ALICE)
    assert people_names(engine, [ALICE.id, "unknown"]) == {ALICE.id: ALICE.name, "unknown": "unknown"}


# --- review chat -------------------------------------------------------------------------------------------


def test_review_threads_and_imports_belong_to_their_person(engine: Engine) -> None:
    alice, bob = review_chat.repository(engine, ALICE), review_chat.repository(engine, BOB)
    sample = review_chat.sample_review_id(alice)
    assert review_chat.sample_review_id(bob) == sample  # one shared sample
    imported = review_chat.import_review(alice, json.dumps(REVIEW.to_json_dict()).encode())
    assert imported.review_id is not None
    review = alice.get_review(imported.review_id)
    assert review is not None
    result = review_chat.run_turn(alice, ReplayClient(["A1"]), review, None, [], "§3 はどうですか")
    thread = result.thread_id
    assert thread is not None and result.stored

    assert [r.id for r in review_chat.list_reviews(alice)] == [sample, imported.review_id]
    assert [r.id for r in review_chat.list_reviews(bob)] == [sample]
    assert review_chat.get_review(bob, imported.review_id) is None
    assert review_chat.open_thread(bob, thread) is None  # another person's ?review_thread=ID
    assert review_chat.list_threads(bob, imported.review_id) == []
    assert bob.load_messages(thread) == [] and bob.get_thread(thread) is None
    with pytest.raises(KeyError):
        bob.create_thread(imported.review_id)
    with pytest.raises(KeyError):
        bob.save_turn(thread, 2, "割り込み", "x", review_chat.ThreadState())
    assert not bob.save_summary(thread, review_chat.ThreadState("要約", 5))

    # Bob's turn on the shared sample, sent with Alice's thread id, starts Bob's own thread
    sample_review = bob.get_review(sample)
    assert sample_review is not None
    mine = review_chat.run_turn(bob, ReplayClient(["B1"]), sample_review, thread, [], "質問")
    assert mine.thread_id not in (None, thread) and mine.stored
    assert [t.id for t in review_chat.list_threads(alice, sample)] == []
    assert [t.id for t in review_chat.list_threads(bob, sample)] == [mine.thread_id]
    opened = review_chat.open_thread(alice, thread)
    assert opened is not None and [i["content"] for i in opened.items] == ["§3 はどうですか", "A1"]


# --- diagnosis ---------------------------------------------------------------------------------------------


def test_diagnosis_sessions_are_handed_only_to_their_person() -> None:
    service = ChatService()
    session = service.session(None, ALICE.id)
    assert service.session(session.session_id, ALICE.id) is session
    other = service.session(session.session_id, BOB.id)
    assert other is not session and other.owner_id == BOB.id
    assert service.restart(session.session_id, BOB.id) is not session
    assert service.store.get(session.session_id, ALICE.id) is session  # Bob's restart left it alone


def test_a_session_id_sent_by_another_person_runs_in_a_new_session(engine: Engine) -> None:
    service = ChatService()
    alice_deps = open_deps(demo_client(), engine, ALICE, clock=lambda: T0)
    first = run_turn(
        service, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"), alice_deps
    )[0]
    for request in (
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="警告灯が点いた"),
    ):
        request.session_id = first.session_id
        first = run_turn(service, request, alice_deps)[0]
    bob_deps = open_deps(demo_client(), engine, BOB, clock=lambda: T0)
    second, _ = run_turn(service, ChatRequest(session_id=first.session_id, message="こんにちは"), bob_deps)
    assert second.session_id != first.session_id and second.owner_id == BOB.id
    assert first.vehicle_id == "minato-soleil-2022" and second.vehicle_id == ""
    alice_said = [i["content"] for i in first.conversation_history if i["role"] == "user"]
    assert alice_said and not any(i["content"] in alice_said for i in second.conversation_history)


def test_bookings_are_listed_for_their_person_and_for_admins(engine: Engine) -> None:
    booking = {"booking_type": "visit", "name": "お客様A", "phone": "090-1111-2222"}
    alice_booking = DiagnosisRepository(engine, clock=lambda: T0, owner_id=ALICE.id).save_booking(booking)
    bob_booking = DiagnosisRepository(engine, clock=lambda: T0, owner_id=BOB.id).save_booking(
        {**booking, "name": "お客様B"}
    )
    assert [b["id"] for b in list_bookings(engine, ALICE)] == [alice_booking]
    assert [b["name"] for b in list_bookings(engine, BOB)] == ["お客様B"]
    assert DiagnosisRepository(engine, owner_id=BOB.id).get_booking(alice_booking) is None
    assert team_bookings(engine, BOB) is None
    team = team_bookings(engine, ADMIN)
    assert team is not None
    assert [(b["id"], b["owner_id"]) for b in team] == [(bob_booking, BOB.id), (alice_booking, ALICE.id)]
    assert list_bookings(engine, ADMIN) == []  # an admin's own list is their own


def test_a_personal_repository_needs_its_person(engine: Engine) -> None:
    with pytest.raises(TypeError):
        DiagnosisRepository(engine)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="person"):
        DiagnosisRepository(engine, owner_id="")
