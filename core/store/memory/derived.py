"""Writers of the units derived from episodes: facts, loops and summaries (spec 03), safe to run twice.

A loop is unique by its text, a summary by its scope, per person: their first write is INSERT ... ON
CONFLICT DO NOTHING under that index (both engines, `insert_unit_once`), so two jobs writing the same unit at
once end as one unit instead of raising IntegrityError.

`DerivedUnits` is a mixin of `MemoryRepository` (core/store/memory/repository.py); its methods need only the
repository's unit primitives (`UnitWriter`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from sqlalchemy import Connection, and_, select, update

from core.store.memory.tables import (
    KIND_FACT,
    KIND_LOOP,
    KIND_SUMMARY,
    STATE_ACTIVE,
    dumps,
    mine,
    payload_fact,
    payload_loop,
    payload_summary,
    units,
)


class UnitWriter(Protocol):
    """The unit primitives of MemoryRepository that the derived writers use."""

    owner_id: str

    def _tx(self, conn: Connection | None) -> AbstractContextManager[Connection]: ...

    def _at(self, now: int | None) -> int: ...

    def lock_unit(self, conn: Connection, unit_id: int) -> bool: ...

    def record_version(
        self,
        unit_id: int,
        change_kind: str,
        now: int | None = None,
        note: str = "",
        *,
        conn: Connection | None = None,
    ) -> int: ...

    def insert_unit(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        occurred_at: int | None = None,
        now: int | None = None,
        conn: Connection | None = None,
        **fields: Any,
    ) -> int: ...

    def insert_unit_once(
        self,
        kind: str,
        payload: Mapping[str, Any],
        unique: list[str],
        *,
        occurred_at: int,
        now: int,
        conn: Connection,
        **fields: Any,
    ) -> int | None: ...


class DerivedUnits:
    """Facts, loops and summaries of one person, written idempotently (mixed into MemoryRepository)."""

    def upsert_fact(
        self: UnitWriter,
        fact: Mapping[str, Any],
        subject_id: int,
        object_id: int | None,
        evidence_unit_id: int,
        occurred_at: int,
        now: int | None = None,
        *,
        conn: Connection | None = None,
    ) -> tuple[int, bool]:
        """Store a FACT (spec 03: evidence_unit_ids_json always holds the source episode); the same active
        fact (subject, predicate, object) is merged: evidence appended, confidence max. (unit id, created)."""
        now = self._at(now)
        with self._tx(conn) as c:
            row = c.execute(
                select(payload_fact.c.unit_id, payload_fact.c.evidence_unit_ids_json)
                .join(units, units.c.id == payload_fact.c.unit_id)
                .where(
                    and_(
                        payload_fact.c.subject_entity_id == subject_id,
                        payload_fact.c.predicate == fact["predicate"],
                        payload_fact.c.object_text == fact["object_text"],
                        units.c.state == STATE_ACTIVE,
                        mine(self.owner_id),
                    )
                )
            ).first()
            if row is None:
                payload = {
                    "subject_entity_id": subject_id,
                    "predicate": fact["predicate"],
                    "predicate_raw": fact.get("predicate_raw", ""),
                    "object_text": fact["object_text"],
                    "object_entity_id": object_id,
                    "valid_from": fact.get("valid_from"),
                    "valid_to": fact.get("valid_to"),
                    "evidence_unit_ids_json": dumps([evidence_unit_id]),
                }
                unit_id = self.insert_unit(
                    KIND_FACT,
                    payload,
                    occurred_at=occurred_at,
                    now=now,
                    conn=c,
                    confidence=fact["confidence"],
                )
                return unit_id, True
            evidence = list(dict.fromkeys([*json.loads(row.evidence_unit_ids_json), evidence_unit_id]))
            c.execute(
                update(payload_fact)
                .where(payload_fact.c.unit_id == row.unit_id)
                .values(evidence_unit_ids_json=dumps(evidence))
            )
            old = c.execute(select(units.c.confidence).where(units.c.id == row.unit_id)).scalar_one()
            c.execute(
                update(units)
                .where(units.c.id == row.unit_id)
                .values(confidence=max(old, fact["confidence"]), occurred_at=occurred_at, updated_at=now)
            )
        return int(row.unit_id), False

    def upsert_loop(
        self: UnitWriter,
        loop_text: str,
        confidence: float,
        due_at: int | None,
        expires_at: int,
        source_unit_id: int,
        occurred_at: int,
        now: int | None = None,
        *,
        conn: Connection | None = None,
    ) -> int:
        """Store a LOOP with the due and expiry times the flow computed (spec 03: OpenLoops); the same
        loop_text refreshes the existing loop (times, source, confidence; active again)."""
        now = self._at(now)
        payload = {
            "loop_text": loop_text,
            "due_at": due_at,
            "expires_at": expires_at,
            "source_unit_id": source_unit_id,
        }
        same_loop = and_(payload_loop.c.loop_text == loop_text, payload_loop.c.owner_id == self.owner_id)
        with self._tx(conn) as c:
            existing = c.execute(select(payload_loop.c.unit_id).where(same_loop)).scalar()
            created = (
                None
                if existing is not None
                else self.insert_unit_once(
                    KIND_LOOP,
                    payload,
                    ["owner_id", "loop_text"],
                    occurred_at=occurred_at,
                    now=now,
                    conn=c,
                    confidence=confidence,
                )
            )
            if created is not None:
                return created
            unit_id = c.execute(select(payload_loop.c.unit_id).where(same_loop)).scalar_one()
            c.execute(
                update(payload_loop)
                .where(payload_loop.c.unit_id == unit_id)
                .values(due_at=due_at, expires_at=expires_at, source_unit_id=source_unit_id)
            )
            c.execute(
                update(units)
                .where(units.c.id == unit_id)
                .values(confidence=confidence, updated_at=now, state=STATE_ACTIVE)
            )
        return int(unit_id)

    def upsert_summary(
        self: UnitWriter,
        scope_label: str,
        scope_key: str,
        range_start: int,
        range_end: int,
        data: Mapping[str, Any],
        evidence: list[int],
        now: int | None = None,
        *,
        conn: Connection | None = None,
    ) -> int:
        """One SUMMARY unit per (scope_label, scope_key), replaced in place (versioned) on each run; the first
        write is INSERT ... ON CONFLICT DO NOTHING under uq_memory_summary_scope, so two jobs writing the same
        scope at once end as one unit (the later one updates it) instead of an IntegrityError."""
        now = self._at(now)
        payload = {
            "range_start": range_start,
            "range_end": range_end,
            "summary_text": data.get("summary_text", ""),
            "summary_json": dumps(dict(data)),
            "evidence_unit_ids_json": dumps(evidence),
        }
        mine_scope = and_(
            payload_summary.c.scope_label == scope_label,
            payload_summary.c.scope_key == scope_key,
            payload_summary.c.owner_id == self.owner_id,
        )
        with self._tx(conn) as c:
            existing = c.execute(select(payload_summary.c.unit_id).where(mine_scope)).scalar()
            created = (
                None
                if existing is not None
                else self.insert_unit_once(
                    KIND_SUMMARY,
                    {"scope_label": scope_label, "scope_key": scope_key, **payload},
                    ["owner_id", "scope_label", "scope_key"],
                    occurred_at=now,
                    now=now,
                    conn=c,
                    salience=0.7,
                    confidence=0.8,
                )
            )
            if created is not None:
                return created
            unit_id = c.execute(select(payload_summary.c.unit_id).where(mine_scope)).scalar_one()
            c.execute(update(payload_summary).where(payload_summary.c.unit_id == unit_id).values(**payload))
            c.execute(update(units).where(units.c.id == unit_id).values(occurred_at=now, updated_at=now))
            self.record_version(int(unit_id), "edit", now, "再生成", conn=c)
        return int(unit_id)
