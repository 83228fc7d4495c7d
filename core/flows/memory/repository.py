"""Write units, payloads, entities, edges and loops (issue 5 "Store"); every new unit gets version 1."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from core.flows.memory.constants import KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY, STATE_ACTIVE
from core.flows.memory.indexing import dumps
from core.flows.memory.loops import cap_due_at, compute_loop_expires_at
from core.flows.memory.normalize import clamp01
from core.store.memory import (
    payload_episode,
    payload_fact,
    payload_loop,
    payload_summary,
    unit_versions,
    units,
)


def new_id(result: Any) -> int:
    """The primary key of the row an INSERT created."""
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


UNIT_FIELDS = (
    "kind",
    "occurred_at",
    "state",
    "confidence",
    "salience",
    "sensitivity",
    "pin",
    "topic_tags",
    "persona_affect_label",
    "persona_affect_intensity",
)
PAYLOAD_TABLES = {
    KIND_EPISODE: payload_episode,
    KIND_FACT: payload_fact,
    KIND_LOOP: payload_loop,
    KIND_SUMMARY: payload_summary,
}
# Payload fields an analyst may edit (and a version snapshot keeps).
PAYLOAD_FIELDS = {
    KIND_EPISODE: ("input_text", "reply_text"),
    KIND_FACT: ("predicate", "object_text", "valid_from", "valid_to"),
    KIND_LOOP: ("loop_text", "due_at", "expires_at"),
    KIND_SUMMARY: ("summary_text",),
}


def snapshot(conn: Connection, unit_id: int) -> dict[str, Any]:
    """The editable state of a unit (unit fields + payload fields), as stored in unit_versions."""
    row = conn.execute(select(units).where(units.c.id == unit_id)).mappings().one()
    snap = {name: row[name] for name in UNIT_FIELDS}
    table = PAYLOAD_TABLES[row["kind"]]
    payload: Any = conn.execute(select(table).where(table.c.unit_id == unit_id)).mappings().first() or {}
    snap.update({name: payload.get(name) for name in PAYLOAD_FIELDS[row["kind"]]})
    return snap


def record_version(conn: Connection, unit_id: int, change_kind: str, now: int, note: str = "") -> int:
    """Append the unit's current state as its next version; returns the version number."""
    last = conn.execute(
        select(func.max(unit_versions.c.version)).where(unit_versions.c.unit_id == unit_id)
    ).scalar()
    version = int(last or 0) + 1
    conn.execute(
        insert(unit_versions).values(
            unit_id=unit_id,
            version=version,
            changed_at=now,
            change_kind=change_kind,
            snapshot_json=dumps(snapshot(conn, unit_id)),
            note=note,
        )
    )
    return version


def insert_unit(
    conn: Connection, kind: str, now: int, occurred_at: int, payload: dict[str, Any], **fields: Any
) -> int:
    """Insert a unit and its payload row, then record version 1."""
    values = {
        "kind": kind,
        "occurred_at": occurred_at,
        "created_at": now,
        "updated_at": now,
        "state": STATE_ACTIVE,
        "confidence": 0.5,
        "salience": 0.5,
        "sensitivity": 0,
        "pin": 0,
        "topic_tags": "[]",
        "extract_state": "none",
        **fields,
    }
    unit_id = new_id(conn.execute(insert(units).values(**values)))
    conn.execute(insert(PAYLOAD_TABLES[kind]).values(unit_id=unit_id, **payload))
    record_version(conn, unit_id, "create", now)
    return unit_id


def save_episode(
    conn: Connection,
    input_text: str,
    reply_text: str,
    reflection: dict[str, Any],
    *,
    source: str,
    occurred_at: int,
    now: int,
) -> int:
    """Store one exchange as an EPISODE with its reflection (spec 03: Reflection); extraction pending."""
    return insert_unit(
        conn,
        KIND_EPISODE,
        now,
        occurred_at,
        {
            "input_text": input_text,
            "reply_text": reply_text,
            "reflection_json": dumps(reflection),
            "reflection_source": source,
        },
        confidence=clamp01(reflection.get("confidence")),
        salience=clamp01(reflection.get("salience")),
        topic_tags=dumps(list(reflection.get("topic_tags", []))),
        persona_affect_label=reflection.get("persona_affect_label", "neutral"),
        persona_affect_intensity=clamp01(reflection.get("persona_affect_intensity"), 0.0),
        extract_state="pending",
    )


def upsert_fact(
    conn: Connection,
    fact: dict[str, Any],
    subject_id: int,
    object_id: int | None,
    evidence_unit_id: int,
    occurred_at: int,
    now: int,
) -> tuple[int, bool]:
    """Store a FACT (spec 03: evidence_unit_ids_json always holds the source episode); same fact -> merge."""
    row = conn.execute(
        select(payload_fact.c.unit_id, payload_fact.c.evidence_unit_ids_json)
        .join(units, units.c.id == payload_fact.c.unit_id)
        .where(
            and_(
                payload_fact.c.subject_entity_id == subject_id,
                payload_fact.c.predicate == fact["predicate"],
                payload_fact.c.object_text == fact["object_text"],
                units.c.state == STATE_ACTIVE,
            )
        )
    ).first()
    if row is not None:
        evidence = list(dict.fromkeys([*json.loads(row.evidence_unit_ids_json), evidence_unit_id]))
        conn.execute(
            update(payload_fact)
            .where(payload_fact.c.unit_id == row.unit_id)
            .values(evidence_unit_ids_json=dumps(evidence))
        )
        old = conn.execute(select(units.c.confidence).where(units.c.id == row.unit_id)).scalar_one()
        conn.execute(
            update(units)
            .where(units.c.id == row.unit_id)
            .values(confidence=max(old, fact["confidence"]), occurred_at=occurred_at, updated_at=now)
        )
        return int(row.unit_id), False
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
    return insert_unit(conn, KIND_FACT, now, occurred_at, payload, confidence=fact["confidence"]), True


def upsert_loop(
    conn: Connection, loop: dict[str, Any], source_unit_id: int, occurred_at: int, now: int
) -> int:
    """Store a LOOP with its expiry (spec 03: OpenLoops); the same loop_text refreshes the existing one."""
    due = cap_due_at(loop.get("due_at"), now)
    expires = compute_loop_expires_at(due, now)
    row = conn.execute(
        select(payload_loop.c.unit_id).where(payload_loop.c.loop_text == loop["loop_text"])
    ).first()
    if row is not None:
        conn.execute(
            update(payload_loop)
            .where(payload_loop.c.unit_id == row.unit_id)
            .values(due_at=due, expires_at=expires, source_unit_id=source_unit_id)
        )
        conn.execute(
            update(units)
            .where(units.c.id == row.unit_id)
            .values(confidence=loop["confidence"], updated_at=now, state=STATE_ACTIVE)
        )
        return int(row.unit_id)
    payload = {
        "loop_text": loop["loop_text"],
        "due_at": due,
        "expires_at": expires,
        "source_unit_id": source_unit_id,
    }
    return insert_unit(conn, KIND_LOOP, now, occurred_at, payload, confidence=loop["confidence"])


def upsert_summary(
    conn: Connection,
    scope_label: str,
    scope_key: str,
    range_start: int,
    range_end: int,
    data: dict[str, Any],
    evidence: list[int],
    now: int,
) -> int:
    """One SUMMARY unit per (scope_label, scope_key), replaced in place (versioned) on each run."""
    payload = {
        "range_start": range_start,
        "range_end": range_end,
        "summary_text": data.get("summary_text", ""),
        "summary_json": dumps(data),
        "evidence_unit_ids_json": dumps(evidence),
    }
    row = conn.execute(
        select(payload_summary.c.unit_id).where(
            and_(payload_summary.c.scope_label == scope_label, payload_summary.c.scope_key == scope_key)
        )
    ).first()
    if row is None:
        return insert_unit(
            conn,
            KIND_SUMMARY,
            now,
            now,
            {"scope_label": scope_label, "scope_key": scope_key, **payload},
            salience=0.7,
            confidence=0.8,
        )
    conn.execute(update(payload_summary).where(payload_summary.c.unit_id == row.unit_id).values(**payload))
    conn.execute(update(units).where(units.c.id == row.unit_id).values(occurred_at=now, updated_at=now))
    record_version(conn, int(row.unit_id), "edit", now, "再生成")
    return int(row.unit_id)


def expired_loop_ids(conn: Connection, now: int) -> list[int]:
    """Loops whose expires_at has passed (to be hard-deleted)."""
    return [
        int(i)
        for i in conn.execute(
            select(payload_loop.c.unit_id).where(payload_loop.c.expires_at <= now)
        ).scalars()
    ]
