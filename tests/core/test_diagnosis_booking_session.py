"""Booking follows the session's urgency, dates without a year, late visits confirmed, bookings carry the
interview, and sessions survive a reload through the store (issue 12 items 3 and 6)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from core.flows.diagnosis.booking import (
    booking_record,
    clean_booking,
    late_visit_warning,
    list_bookings,
    parse_datetime,
    validate_booking,
)
from core.flows.diagnosis.deps import open_deps, session_archive
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.responses import session_banner
from core.flows.diagnosis.service import ChatService, run_turn, session_from_state, session_state
from core.flows.diagnosis.step_shared import reservation_prompt
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from tests.core.diagnosis_fixtures import NOW, NOW_TS, diag, make_session

BASE = {"name": "山田", "phone": "090-1234-5678"}


@pytest.mark.parametrize(
    ("level", "visit", "banner"),
    [
        ("low", "", "ご都合のよいときに点検をおすすめします"),
        ("none", "", "ご都合のよいときに点検をおすすめします"),
        ("medium", "", "今週中の来場をおすすめします"),
        ("high", "", "本日中の来場をおすすめします"),
        ("low", "this_week", "今週中の来場をおすすめします"),
    ],
)
def test_reservation_message_follows_the_real_urgency(level: str, visit: str, banner: str) -> None:
    session = make_session(urgency_level=level, can_drive=True, visit_urgency=visit)
    assert session_banner(session) == banner
    assert banner in reservation_prompt(session).message
    assert "本日中" not in reservation_prompt(make_session(urgency_level="low", visit_urgency="")).message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("11月25日 午前10時", datetime(2026, 11, 25, 10, 0)),
        ("11月25日 午後3時半", datetime(2026, 11, 25, 15, 30)),
        ("11/25(水) 10:00", datetime(2026, 11, 25, 10, 0)),
        ("１１月２５日　１０時", datetime(2026, 11, 25, 10, 0)),
        ("1月10日 9時", datetime(2027, 1, 10, 9, 0)),  # already past this year: next year's
        ("11月21日 9時", datetime(2027, 11, 21, 9, 0)),  # earlier today: next year's
        ("2026年11月25日 10時", datetime(2026, 11, 25, 10, 0)),
    ],
)
def test_dates_without_a_year_take_the_next_such_date(text: str, expected: datetime) -> None:
    assert parse_datetime(text, NOW) == expected


def test_year_less_date_is_valid_and_stored_with_its_year() -> None:
    data = {**BASE, "preferred_time": "11月25日 午前10時"}
    assert validate_booking("visit", data, NOW) == {}
    assert clean_booking("visit", data, NOW)["preferred_time"] == "2026-11-25 10:00"
    assert "preferred_time" in validate_booking("visit", {**BASE, "preferred_time": "2月30日 10時"}, NOW)


@pytest.mark.parametrize(
    ("visit", "when", "late"),
    [
        ("today", "2026-11-21 18:00", False),
        ("today", "2027-01-21 10:00", True),
        ("this_week", "2026-11-27 10:00", False),
        ("this_week", "2026-12-21 10:00", True),
        ("when_convenient", "2027-01-21 10:00", False),
    ],
)
def test_a_visit_later_than_the_urgency_allows_is_flagged(visit: str, when: str, late: bool) -> None:
    session = make_session(urgency_level="high", visit_urgency=visit, booking_type="visit")
    session.booking_data = {**BASE, "preferred_time": when}
    warning = late_visit_warning(session, NOW)
    assert bool(warning) == late
    if late:
        assert "この日時でよろしいですか" in warning


def walk_to_confirmation(tmp_path, preferred: str):  # type: ignore[no-untyped-def]
    engine = open_store(tmp_path)
    client = ReplayClient(
        [
            diag(message="いつ音がしますか？"),
            diag(
                action="provide_answer",
                choices=None,
                urgency_flag="high",
                can_drive=True,
                visit_urgency="today",
                manual_coverage="partially_covered",
                message="ベルトの劣化が考えられます。",
            ),
        ]
    )
    deps = open_deps(client, engine, LOCAL_PERSON, clock=lambda: NOW_TS)
    service = ChatService()
    session_id = None
    response = None
    for request in [
        ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"),
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="エンジンをかけるとキュルキュル鳴る"),
        ChatRequest(action="choice", action_value="走行中"),
        ChatRequest(action="reservation", action_value="visit"),
        ChatRequest(action="submit_booking", action_value=json.dumps({**BASE, "preferred_time": preferred})),
    ]:
        request.session_id = session_id
        session, response = run_turn(service, request, deps)
        session_id = session.session_id
    return engine, deps, service, session, response


def test_late_visit_asks_for_confirmation_then_the_booking_carries_the_interview(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine, deps, service, session, response = walk_to_confirmation(tmp_path, "1月15日 10時")
    assert response.current_step == "booking_confirm"
    assert "2027-01-15 10:00" in response.prompt.message and "本日中" in response.prompt.message
    assert [c["label"] for c in response.prompt.choices] == ["この内容で予約する", "日時を変更する"]
    run_turn(service, ChatRequest(session.session_id, action="booking_confirm", action_value="confirm"), deps)
    row = list_bookings(engine, LOCAL_PERSON)[0]
    assert row["symptom"] == "エンジンをかけるとキュルキュル鳴る"
    assert row["symptoms"] == ["エンジンをかけるとキュルキュル鳴る", "走行中"]
    assert row["answers"] == [{"question": "いつ音がしますか？", "answer": "走行中"}]
    assert (row["urgency_level"], row["visit_urgency"], row["manual_coverage"]) == (
        "high",
        "today",
        "partially_covered",
    )
    assert row["preferred_time"] == "2027-01-15 10:00"


def test_booking_record_lists_every_symptom_and_the_summary() -> None:
    session = make_session(urgency_level="medium", visit_urgency="this_week")
    session.symptom_text, session.collected_symptoms = "異音がする", ["走行中", "右前から"]
    session.conversation_summary = "走行中に右前から異音。"
    record = booking_record(session)
    assert record["symptoms"] == ["異音がする", "走行中", "右前から"]
    assert record["summary"] == "走行中に右前から異音。"


def test_a_session_survives_a_reload_and_a_server_restart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = open_store(tmp_path)
    deps = open_deps(
        ReplayClient([diag(message="いつ音がしますか？")]), engine, LOCAL_PERSON, clock=lambda: NOW_TS
    )
    first = ChatService()
    session, _ = run_turn(
        first, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"), deps
    )
    for request in (
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="ドアがきしむ"),
    ):
        request.session_id = session.session_id
        run_turn(first, request, deps)
    # a new server process: nothing in memory, the id comes from the URL
    restarted = ChatService().session(
        session.session_id, LOCAL_PERSON.id, session_archive(engine, LOCAL_PERSON, lambda: NOW_TS + 60)
    )
    assert restarted.session_id == session.session_id and restarted.owner_id == LOCAL_PERSON.id
    assert restarted.current_step == ChatStep.DIAGNOSING and restarted.diagnostic_turn == 1
    assert [i["content"] for i in restarted.conversation_history] == [
        i["content"] for i in session.conversation_history
    ]
    assert restarted.state_snapshots == session.state_snapshots
    # expired (older than the session TTL): a new session
    stale = ChatService().session(
        session.session_id, LOCAL_PERSON.id, session_archive(engine, LOCAL_PERSON, lambda: NOW_TS + 3 * 86400)
    )
    assert stale.session_id != session.session_id
    # restart forgets it in the store too
    ChatService().restart(session.session_id, LOCAL_PERSON.id, session_archive(engine, LOCAL_PERSON))
    assert session_archive(engine, LOCAL_PERSON).load_session(session.session_id) is None


def test_session_state_round_trips_through_json() -> None:
    session = make_session(urgency_level="high", visit_urgency="today")
    session.collected_symptoms = ["a"]
    back = session_from_state(json.loads(json.dumps(session_state(session))))
    assert back.dump() == session.dump()
