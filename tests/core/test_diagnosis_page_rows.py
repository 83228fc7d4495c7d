"""What the diagnosis page reads from the flow, typed: the bookings it lists and the manual excerpts it shows."""

from __future__ import annotations

from sqlalchemy import Engine

from core.flows.diagnosis import (
    BookingRow,
    InterviewAnswer,
    ManualSource,
    SessionState,
    manual_sources,
    taken_bookings,
    team_booking_rows,
)
from core.store.diagnosis import DiagnosisRepository
from tests.persons import ADMIN, ALICE, BOB


def test_bookings_are_rows_of_the_person_who_took_them(engine: Engine) -> None:
    booking = {
        "booking_type": "dispatch",
        "vehicle_label": "Minato Soleil（2022年式）",
        "name": "顧客一郎",
        "phone": "090-1111-2222",
        "address": "港区1-2-3",
        "urgency_level": "high",
        "can_drive": False,
        "reasons": ["警告灯"],
        "answers": [{"question": "いつ点きましたか？", "answer": "走行中"}],
        "manual_coverage": "covered",
    }
    booking_id = DiagnosisRepository(engine, owner_id=ALICE.id).save_booking(booking)
    [row] = taken_bookings(engine, ALICE)
    assert isinstance(row, BookingRow) and (row.id, row.owner_id, row.booking_type) == (
        booking_id,
        ALICE.id,
        "dispatch",
    )
    assert (row.name, row.address, row.preferred_time, row.can_drive, row.reasons) == (
        "顧客一郎",
        "港区1-2-3",
        "",
        False,
        ["警告灯"],
    )
    assert (
        row.answers == [InterviewAnswer("いつ点きましたか？", "走行中")] and row.manual_coverage == "covered"
    )
    assert taken_bookings(engine, BOB) == [] and team_booking_rows(engine, BOB) is None
    assert team_booking_rows(engine, ADMIN) == [row]


def test_manual_sources_read_the_sessions_last_hits() -> None:
    session = SessionState("s1")
    hit = {
        "chunk_id": "c1",
        "vehicle_id": "v1",
        "content": "警告灯が点灯したら…",
        "page": 12,
        "section": "警告灯",
        "content_type": "warning",
        "has_warning": True,
        "score": 0.71,
    }
    session.last_rag_sources = [hit]
    assert manual_sources(session) == [
        ManualSource("c1", "v1", 12, "警告灯", "warning", True, "警告灯が点灯したら…", 0.71)
    ]
    assert manual_sources(SessionState("s2")) == []
