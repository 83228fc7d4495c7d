"""run_turn, the one function the page calls, on a real SQLite store; bookings at rest (spec 04 §1, §7)."""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Text

from core.clock import format_local
from core.flows.chat_item import is_history
from core.flows.diagnosis.booking import list_bookings, local_now
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.diagnosis.step_shared import SYMPTOM_QUESTION
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import init_db, make_engine
from core.store.diagnosis import DiagnosisRepository
from tests.core.diagnosis_fixtures import NOW, NOW_TS, diag


def test_two_diagnostic_turns_to_a_stored_booking(engine) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient(
        [
            diag(message="いつ音がしますか？"),
            diag(
                action="provide_answer",
                choices=None,
                urgency_flag="high",
                can_drive=True,
                visit_urgency="today",
                message="ベルトの劣化が考えられます。",
            ),
        ]
    )
    deps = open_deps(client, engine, LOCAL_PERSON, clock=lambda: NOW_TS)
    service = ChatService()
    requests = [
        ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"),
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="エンジンをかけるとキュルキュル鳴る"),  # diagnostic turn 1
        ChatRequest(action="choice", action_value="走行中"),  # diagnostic turn 2
        ChatRequest(action="reservation", action_value="visit"),
        ChatRequest(
            action="submit_booking",
            action_value=json.dumps(
                {"name": "山田 太郎", "phone": "090-1234-5678", "preferred_time": "2026年11月25日 10時"}
            ),
        ),
        ChatRequest(action="booking_confirm", action_value="confirm"),
    ]
    steps, session_id, history = [], None, None
    for request in requests:
        request.session_id = session_id
        session, response = run_turn(service, request, deps)
        session_id = session.session_id
        history = history if history is not None else session.conversation_history
        assert session.conversation_history is history  # one live list for the whole session
        steps.append(response.current_step)
    assert steps == [
        "photo_confirm",
        "free_text",
        "diagnosing",
        "reservation",
        "booking_info",
        "booking_confirm",
        "done",
    ]
    assert [r.tags["step"] for r in client.requests] == ["diagnosing", "diagnosing"]
    assert service.store.get(session_id, LOCAL_PERSON.id) is session and session.diagnostic_turn == 2
    assert "D-000001" in response.prompt.message
    # the page draws this history: core.flows.chat_item items, every one done
    assert all(is_history(item) for item in history)  # type: ignore[union-attr]
    assert [(i["role"], i["content"]) for i in history[1:3]] == [  # type: ignore[index]
        ("user", "エンジンをかけるとキュルキュル鳴る"),
        ("assistant", "いつ音がしますか？"),
    ]
    assert history[2]["meta"]["choices"] == ["走行中", "停車中", "わからない", "自由入力"]  # type: ignore[index]
    rows = list_bookings(engine, LOCAL_PERSON)
    assert len(rows) == 1
    row = rows[0]
    assert (row["id"], row["booking_type"], row["name"], row["phone"]) == (
        1,
        "visit",
        "山田 太郎",
        "090-1234-5678",
    )
    assert row["preferred_time"] == "2026-11-25 10:00"  # the local appointment, as picked
    assert row["created_at"] == NOW_TS and format_local(row["created_at"]) == "2026-11-21 10:00"
    assert (row["urgency_level"], row["symptom"], row["session_id"]) == (
        "high",
        "エンジンをかけるとキュルキュル鳴る",
        session_id,
    )


def test_a_rewind_keeps_the_same_history_list(engine) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient([diag(message="Q1？"), diag(message="Q2？")])
    deps = open_deps(client, engine, LOCAL_PERSON, clock=lambda: NOW_TS)
    service = ChatService()
    session, _ = run_turn(
        service, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"), deps
    )
    history = session.conversation_history
    for request in (
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="ドアがきしむ"),
        ChatRequest(message="走行中"),
    ):
        request.session_id = session.session_id
        run_turn(service, request, deps)
    assert session.current_step == ChatStep.DIAGNOSING and len(history) == 5
    _, response = run_turn(service, ChatRequest(session.session_id, rewind_to_turn=2), deps)
    assert response.rewound_to_turn == 2 and session.conversation_history is history
    assert [i["content"] for i in history] == [SYMPTOM_QUESTION, "ドアがきしむ", "Q1？"]


def test_unknown_session_starts_a_new_one_and_restart_forgets_it() -> None:
    service = ChatService()
    me = LOCAL_PERSON.id
    first = service.session("gone", me)
    assert first.current_step == ChatStep.VEHICLE_ID and service.session(first.session_id, me) is first
    second = service.restart(first.session_id, me)
    assert service.store.get(first.session_id, me) is None and second.session_id != first.session_id


def test_local_now_is_the_clock_in_japan_time() -> None:
    assert local_now(lambda: NOW_TS) == NOW


def test_upgrade_turns_old_local_datetimes_into_epoch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine(tmp_path)
    old = Table(
        "diagnosis_bookings",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("session_id", String),
        Column("booking_type", String),
        Column("vehicle_id", String),
        Column("vehicle_label", String),
        Column("name", String),
        Column("phone", String),
        Column("address", String),
        Column("preferred_time", String),
        Column("note", Text),
        Column("symptom", Text),
        Column("urgency_level", String),
        Column("visit_urgency", String),
        Column("can_drive", Integer),
        Column("reasons", Text),
        Column("created_at", DateTime),
    )
    old.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            old.insert().values(
                session_id="s",
                booking_type="dispatch",
                vehicle_id="v",
                vehicle_label="",
                name="山田",
                phone="090-1234-5678",
                address="港区",
                preferred_time="",
                note="",
                symptom="",
                urgency_level="high",
                visit_urgency="today",
                can_drive=0,
                reasons="[]",
                created_at=datetime(2026, 11, 21, 10, 0),  # what the old code wrote: local, naive
            )
        )
    init_db(engine)
    init_db(engine)  # idempotent
    repo = DiagnosisRepository(engine, clock=lambda: NOW_TS + 60, owner_id=LOCAL_PERSON.id)
    assert repo.get_booking(1)["created_at"] == NOW_TS  # type: ignore[index]
    repo.save_booking({"booking_type": "visit", "name": "a", "phone": "b"})
    init_db(engine)
    assert [r["created_at"] for r in repo.list_bookings()] == [NOW_TS + 60, NOW_TS]
