"""Stored bookings as the page lists them (予約一覧): the person's own, and every person's for an admin.

Bookings hold customers' names and phone numbers: a person sees only the bookings they took.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from core.flows.diagnosis.booking import list_bookings, team_bookings
from core.people import Person


@dataclass(frozen=True, slots=True)
class InterviewAnswer:
    """A question of the interview and the customer's answer to it."""

    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class BookingRow:
    """One confirmed booking (spec 04 §7 BOOKING_CONFIRM) with what the interview learned."""

    id: int  # the 受付番号
    owner_id: str  # who took it
    session_id: str
    booking_type: str  # visit | dispatch
    vehicle_id: str
    vehicle_label: str
    name: str
    phone: str
    address: str
    preferred_time: str
    note: str
    symptom: str
    urgency_level: str
    visit_urgency: str
    can_drive: bool
    reasons: list[str]
    symptoms: list[str]
    answers: list[InterviewAnswer]
    summary: str
    manual_coverage: str  # covered | partially_covered | not_covered | ""
    created_at: int  # UTC epoch seconds


def booking_row(row: Mapping[str, Any]) -> BookingRow:
    """A stored booking (DiagnosisRepository's row) as a BookingRow."""
    return BookingRow(
        id=int(row["id"]),
        owner_id=str(row["owner_id"]),
        session_id=row["session_id"] or "",
        booking_type=row["booking_type"] or "",
        vehicle_id=row["vehicle_id"] or "",
        vehicle_label=row["vehicle_label"] or "",
        name=row["name"] or "",
        phone=row["phone"] or "",
        address=row["address"] or "",
        preferred_time=row["preferred_time"] or "",
        note=row["note"] or "",
        symptom=row["symptom"] or "",
        urgency_level=row["urgency_level"] or "",
        visit_urgency=row["visit_urgency"] or "",
        can_drive=bool(row["can_drive"]),
        reasons=list(row.get("reasons") or []),
        symptoms=list(row.get("symptoms") or []),
        answers=[
            InterviewAnswer(a.get("question", ""), a.get("answer", "")) for a in row.get("answers") or []
        ],
        summary=row.get("summary") or "",
        manual_coverage=row.get("manual_coverage") or "",
        created_at=int(row["created_at"]),
    )


def taken_bookings(engine: Engine, person: Person, limit: int = 100) -> list[BookingRow]:
    """The bookings `person` took, newest first."""
    return [booking_row(r) for r in list_bookings(engine, person, limit)]


def team_booking_rows(engine: Engine, person: Person, limit: int = 200) -> list[BookingRow] | None:
    """Every person's bookings, newest first, for an admin (`[katachi] admins`); None for anyone else."""
    rows = team_bookings(engine, person, limit)
    return None if rows is None else [booking_row(r) for r in rows]
