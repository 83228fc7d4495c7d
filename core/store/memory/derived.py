"""Writers of the units derived from episodes: facts, loops and summaries (spec 03), safe to run twice.

Each kind has a unique index that says what "the same" unit is: a fact by its `active_key` (subject,
predicate and object while the unit is active, migration v0015), a loop by its text, a summary by its scope,
all per person. The first write is INSERT ... ON CONFLICT DO NOTHING under that index (both engines,
`insert_unit_once`), so two jobs writing the same unit at once end as one unit: the one that lost the race
merges into the winner's row instead of raising IntegrityError.

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
    STATE_DELETED,
    dumps,
    fact_key,
    payload_fact,
    payload_loop,
    payload_summary,
    units,
)

# A fact found by its key can be deleted or edited between the lookup and the lock; look again this often.
FACT_WRITE_ATTEMPTS = 3
FACT_UNIQUE = ["owner_id", "active_key"]


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


def _active_fact(conn: Connection, owner_id: str, key: str, *, besides: int | None = None) -> int | None:
    """The person's active fact with this key (another than `besides`), if any."""
    query = select(payload_fact.c.unit_id).where(
        payload_fact.c.owner_id == owner_id, payload_fact.c.active_key == key
    )
    if besides is not None:
        query = query.where(payload_fact.c.unit_id != besides)
    found = conn.execute(query).scalar()
    return None if found is None else int(found)


def _add_evidence(
    repo: UnitWriter,
    conn: Connection,
    unit_id: int,
    key: str,
    evidence: list[int],
    confidence: float,
    occurred_at: int,
    now: int,
) -> bool:
    """Merge evidence into the fact with the unit locked (evidence appended in order, confidence max);
    False when the fact no longer has `key` (deleted or edited since it was found)."""
    repo.lock_unit(conn, unit_id)
    row = conn.execute(
        select(payload_fact.c.evidence_unit_ids_json, units.c.confidence)
        .join(units, units.c.id == payload_fact.c.unit_id)
        .where(payload_fact.c.unit_id == unit_id, payload_fact.c.active_key == key)
    ).first()
    if row is None:
        return False
    merged = list(dict.fromkeys([*json.loads(row.evidence_unit_ids_json), *evidence]))
    conn.execute(
        update(payload_fact)
        .where(payload_fact.c.unit_id == unit_id)
        .values(evidence_unit_ids_json=dumps(merged))
    )
    conn.execute(
        update(units)
        .where(units.c.id == unit_id)
        .values(confidence=max(row.confidence, confidence), occurred_at=occurred_at, updated_at=now)
    )
    return True


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
        fact (subject, predicate, object) is merged: evidence appended, confidence max. (unit id, created).
        Two writers of the same fact at once end as one unit holding both evidences."""
        now = self._at(now)
        key = fact_key(subject_id, fact["predicate"], fact["object_text"])
        payload = {
            "subject_entity_id": subject_id,
            "predicate": fact["predicate"],
            "predicate_raw": fact.get("predicate_raw", ""),
            "object_text": fact["object_text"],
            "object_entity_id": object_id,
            "valid_from": fact.get("valid_from"),
            "valid_to": fact.get("valid_to"),
            "evidence_unit_ids_json": dumps([evidence_unit_id]),
            "active_key": key,
        }
        with self._tx(conn) as c:
            for _ in range(FACT_WRITE_ATTEMPTS):
                existing = _active_fact(c, self.owner_id, key)
                if existing is None:
                    created = self.insert_unit_once(
                        KIND_FACT,
                        payload,
                        FACT_UNIQUE,
                        occurred_at=occurred_at,
                        now=now,
                        conn=c,
                        confidence=fact["confidence"],
                    )
                    if created is not None:
                        return created, True
                    continue  # a concurrent writer stored it first: merge into theirs
                merged = _add_evidence(
                    self, c, existing, key, [evidence_unit_id], fact["confidence"], occurred_at, now
                )
                if merged:
                    return existing, False
        raise RuntimeError(f"fact of {self.owner_id} kept changing while being written: {key}")

    def sync_fact_key(self: UnitWriter, unit_id: int, *, conn: Connection) -> int | None:
        """After a fact unit's state, subject, predicate or object changed: set its `active_key` again. When
        another active fact of the person is the same fact, nothing is written and that fact's id is
        returned (the caller refuses the change or merges the two)."""
        row = conn.execute(
            select(
                units.c.state,
                payload_fact.c.subject_entity_id,
                payload_fact.c.predicate,
                payload_fact.c.object_text,
            )
            .join(units, units.c.id == payload_fact.c.unit_id)
            .where(payload_fact.c.unit_id == unit_id)
        ).first()
        if row is None:
            return None
        key = None
        if row.state == STATE_ACTIVE:
            key = fact_key(row.subject_entity_id, row.predicate, row.object_text)
            twin = _active_fact(conn, self.owner_id, key, besides=unit_id)
            if twin is not None:
                return twin
        conn.execute(update(payload_fact).where(payload_fact.c.unit_id == unit_id).values(active_key=key))
        return None

    def merge_fact(self: UnitWriter, keep: int, other: int, now: int, *, conn: Connection) -> None:
        """Merge the fact `other` into the same fact `keep`: its evidence is appended to keep's, confidence
        max; `other` is soft-deleted (kept with its versions, revertible by an analyst)."""
        source = conn.execute(
            select(payload_fact.c.evidence_unit_ids_json, units.c.confidence, units.c.occurred_at)
            .join(units, units.c.id == payload_fact.c.unit_id)
            .where(payload_fact.c.unit_id == other)
        ).one()
        key = conn.execute(select(payload_fact.c.active_key).where(payload_fact.c.unit_id == keep)).scalar()
        if key is None:
            raise ValueError(f"fact #{keep} is not active")
        kept_at = conn.execute(select(units.c.occurred_at).where(units.c.id == keep)).scalar_one()
        evidence = [int(i) for i in json.loads(source.evidence_unit_ids_json)]
        occurred_at = max(int(kept_at), int(source.occurred_at))
        if not _add_evidence(self, conn, keep, key, evidence, source.confidence, occurred_at, now):
            raise ValueError(f"fact #{keep} changed while merging #{other}")
        conn.execute(update(units).where(units.c.id == other).values(state=STATE_DELETED, updated_at=now))
        conn.execute(update(payload_fact).where(payload_fact.c.unit_id == other).values(active_key=None))
        self.record_version(keep, "edit", now, f"同じ事実 #{other} を統合", conn=conn)
        self.record_version(other, "soft_delete", now, f"同じ事実 #{keep} に統合", conn=conn)

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
