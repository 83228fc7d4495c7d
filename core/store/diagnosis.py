"""Bookings made by the diagnosis flow (spec 04 §7): table + a small repository (SQLAlchemy Core).

`created_at` is when the booking was taken, UTC epoch seconds (core.clock). `preferred_time` is the
visit the person picked ("2026-11-25 10:00", a local appointment), stored as they picked it.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, desc, select

from core.store.base import EpochSeconds, Repository, inserted_id
from core.store.db import metadata

diagnosis_bookings = Table(
    "diagnosis_bookings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String, nullable=False, default=""),
    Column("booking_type", String, nullable=False),  # dispatch | visit
    Column("vehicle_id", String, nullable=False, default=""),
    Column("vehicle_label", String, nullable=False, default=""),
    Column("name", String, nullable=False),
    Column("phone", String, nullable=False),
    Column("address", String, nullable=False, default=""),
    Column("preferred_time", String, nullable=False, default=""),
    Column("note", Text, nullable=False, default=""),
    Column("symptom", Text, nullable=False, default=""),
    Column("urgency_level", String, nullable=False, default=""),
    Column("visit_urgency", String, nullable=False, default=""),
    Column("can_drive", Integer, nullable=False, default=1),
    Column("reasons", Text, nullable=False, default="[]"),
    Column("created_at", EpochSeconds, nullable=False),  # UTC epoch seconds
)

FIELDS = (
    "session_id",
    "booking_type",
    "vehicle_id",
    "vehicle_label",
    "name",
    "phone",
    "address",
    "preferred_time",
    "note",
    "symptom",
    "urgency_level",
    "visit_urgency",
)


def _row(mapping: Any) -> dict[str, Any]:
    data = dict(mapping)
    data["can_drive"] = bool(data["can_drive"])
    data["reasons"] = json.loads(data["reasons"] or "[]")
    return data


class DiagnosisRepository(Repository):
    """Save and list diagnosis bookings on the shared engine; `created_at` comes from the clock."""

    def save_booking(self, booking: dict[str, Any]) -> int:
        """Insert one booking (spec 04 §7 BOOKING_CONFIRM); returns its id, the 受付番号."""
        row: dict[str, Any] = {k: str(booking.get(k) or "") for k in FIELDS}
        row["can_drive"] = 1 if booking.get("can_drive", True) else 0
        row["reasons"] = json.dumps(list(booking.get("reasons") or []), ensure_ascii=False)
        row["created_at"] = self.now()
        with self.engine.begin() as conn:
            return inserted_id(conn.execute(diagnosis_bookings.insert().values(**row)))

    def list_bookings(self, limit: int = 100) -> list[dict[str, Any]]:
        """Newest first."""
        query = select(diagnosis_bookings).order_by(desc(diagnosis_bookings.c.id)).limit(limit)
        with self.engine.connect() as conn:
            return [_row(r._mapping) for r in conn.execute(query)]

    def get_booking(self, booking_id: int) -> dict[str, Any] | None:
        query = select(diagnosis_bookings).where(diagnosis_bookings.c.id == booking_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else _row(row._mapping)
