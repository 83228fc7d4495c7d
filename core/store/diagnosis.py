"""Bookings made by the diagnosis flow (spec 04 §7): table + a small repository (SQLAlchemy Core)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Column, DateTime, Engine, Integer, String, Table, Text, desc, select

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
    Column("created_at", DateTime, nullable=False),
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


class BookingRepository:
    """Save and list diagnosis bookings on the shared engine."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def save_booking(self, booking: dict[str, Any]) -> int:
        """Insert one booking; returns its id. `created_at` defaults to now."""
        row: dict[str, Any] = {k: str(booking.get(k) or "") for k in FIELDS}
        row["can_drive"] = 1 if booking.get("can_drive", True) else 0
        row["reasons"] = json.dumps(list(booking.get("reasons") or []), ensure_ascii=False)
        row["created_at"] = booking.get("created_at") or datetime.now().replace(microsecond=0)
        with self.engine.begin() as conn:
            result = conn.execute(diagnosis_bookings.insert().values(**row))
            key = result.inserted_primary_key
            assert key is not None
            return int(key[0])

    def list_bookings(self, limit: int = 100) -> list[dict[str, Any]]:
        """Newest first."""
        query = select(diagnosis_bookings).order_by(desc(diagnosis_bookings.c.id)).limit(limit)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        for row in rows:
            row["can_drive"] = bool(row["can_drive"])
            row["reasons"] = json.loads(row["reasons"] or "[]")
        return rows

    def get_booking(self, booking_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(diagnosis_bookings).where(diagnosis_bookings.c.id == booking_id)
            ).first()
        if row is None:
            return None
        data = dict(row._mapping)
        data["can_drive"] = bool(data["can_drive"])
        data["reasons"] = json.loads(data["reasons"] or "[]")
        return data
