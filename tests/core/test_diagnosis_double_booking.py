"""One confirmation, one booking (issue #22): the same session confirmed by two replicas at once (or the button
pressed twice, each press served by another replica) stores one booking, on SQLite and PostgreSQL; the replica
that lost says so in Japanese with the booking's number."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import Engine

from core.flows.diagnosis.booking import list_bookings
from core.flows.diagnosis.deps import DiagnosisDeps, open_deps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, SessionState
from core.flows.diagnosis.service import ChatService, run_turn
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store.diagnosis import DiagnosisRepository
from tests.core.diagnosis_fixtures import NOW_TS, diag

FORM = {"name": "山田", "phone": "090-1234-5678", "address": "東京都港区芝浦1-2-3"}
ANSWERS = [
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
CONFIRM = {"action": "booking_confirm", "action_value": "confirm"}


def _deps(engine: Engine, outputs: list[str]) -> DiagnosisDeps:
    return open_deps(ReplayClient(outputs), engine, LOCAL_PERSON, clock=lambda: NOW_TS)


def _turn(
    service: ChatService, deps: DiagnosisDeps, sid: str | None, **request: Any
) -> tuple[SessionState, ChatResponse]:
    return run_turn(service, ChatRequest(sid, **request), deps)


def _to_confirmation(service: ChatService, deps: DiagnosisDeps) -> str:
    sid: str | None = None
    for request in [
        {"action": "select_vehicle", "action_value": "minato-soleil-2022"},
        {"action": "photo_confirm", "action_value": "yes"},
        {"message": "エンジンをかけるとキュルキュル鳴る"},
        {"action": "choice", "action_value": "走行中"},
        {"action": "reservation", "action_value": "dispatch"},
        {"action": "submit_booking", "action_value": json.dumps(FORM)},
    ]:
        session, _ = _turn(service, deps, sid, **request)
        sid = session.session_id
    assert session.current_step == ChatStep.BOOKING_CONFIRM
    return session.session_id


class SavesAfter:
    """A booking store that lets another replica run `first` before its own save (the race)."""

    def __init__(self, store: Any, first: Callable[[], object]):
        self.store, self.first = store, first

    def save_booking(self, booking: dict[str, Any]) -> int:
        self.first()
        return int(self.store.save_booking(booking))


def test_two_replicas_confirming_one_session_at_once_store_one_booking(
    engine: Engine, engine_factory: Callable[[], Engine]
) -> None:
    a_service, b_service = ChatService(), ChatService()
    a_deps = _deps(engine, ANSWERS)
    b_engine = engine_factory()
    b_deps = _deps(b_engine, [])
    sid = _to_confirmation(a_service, a_deps)
    assert b_service.session(sid, LOCAL_PERSON.id, b_deps.sessions).current_step == ChatStep.BOOKING_CONFIRM
    b_outcome: list[tuple[SessionState, ChatResponse]] = []
    # both replicas hold the session at the confirmation step; B confirms in full while A is about to save
    racing = replace(
        a_deps,
        store=SavesAfter(a_deps.store, lambda: b_outcome.append(_turn(b_service, b_deps, sid, **CONFIRM))),
    )
    a_session, a_response = _turn(a_service, racing, sid, **CONFIRM)
    ((b_session, b_response),) = b_outcome
    bookings = list_bookings(engine, LOCAL_PERSON)
    assert len(bookings) == 1
    number = f"D-{bookings[0]['id']:06d}"
    assert b_session.booking_id == a_session.booking_id == bookings[0]["id"]
    assert number in b_response.prompt.message and "承りました" in b_response.prompt.message
    assert a_session.current_step == ChatStep.DONE
    assert (
        a_response.prompt.message
        == f"この予約はすでに承っています（受付番号 {number}）。同じ予約が二重に登録されることはありません。"
    )
    stored = DiagnosisRepository(engine, lambda: NOW_TS, owner_id=LOCAL_PERSON.id).load_session(sid)
    assert stored is not None and stored["booking_id"] == bookings[0]["id"]
    b_engine.dispose()


def test_a_second_press_on_a_replica_with_an_old_copy_books_nothing_more(
    engine: Engine, engine_factory: Callable[[], Engine]
) -> None:
    a_service, b_service = ChatService(), ChatService()
    a_deps = _deps(engine, ANSWERS)
    b_engine = engine_factory()
    b_deps = _deps(b_engine, [])
    sid = _to_confirmation(a_service, a_deps)
    b_service.session(sid, LOCAL_PERSON.id, b_deps.sessions)  # B caches the confirmation step
    _turn(a_service, a_deps, sid, **CONFIRM)
    session, response = _turn(b_service, b_deps, sid, **CONFIRM)
    (booking,) = list_bookings(engine, LOCAL_PERSON)
    assert session.booking_id == booking["id"]
    assert (
        f"D-{booking['id']:06d}" in response.prompt.message
        and "すでに承っています" in response.prompt.message
    )
    b_engine.dispose()


def test_a_confirmation_from_a_later_version_of_the_session_is_a_new_booking(engine: Engine) -> None:
    repo = DiagnosisRepository(engine, lambda: NOW_TS, owner_id=LOCAL_PERSON.id)
    first = repo.save_booking({"booking_type": "visit", "name": "山田", "phone": "0", "confirm_key": "s1@5"})
    assert (
        repo.save_booking({"booking_type": "visit", "name": "山田", "phone": "0", "confirm_key": "s1@5"})
        == first
    )
    assert (
        repo.save_booking({"booking_type": "visit", "name": "山田", "phone": "0", "confirm_key": "s1@9"})
        != first
    )
    assert len(repo.list_bookings()) == 2
