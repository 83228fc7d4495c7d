"""A person's active fact is unique: memory_payload_fact gains owner_id and active_key, unique together.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26

Facts were written read-then-insert, so two extraction jobs storing the same fact at once stored it twice.
"The same fact" is one person's active fact with the same subject entity, predicate and object text; the
unit's state lives on memory_units, so the payload carries what the index needs: `owner_id` (the unit's
owner) and `active_key` (a digest of subject, predicate and object while the unit is active, NULL otherwise;
NULLs never conflict on SQLite or PostgreSQL). Facts are written with INSERT ... ON CONFLICT under the index
(core.store.memory.derived) and the key is set again whenever a fact's state or identity changes.

Before the index: duplicate active facts of one person are merged into the lowest unit id (evidence lists
joined in order, confidence the highest, occurred_at the latest); the others are soft-deleted, and both sides
get a version saying so (history kept, revertible from the memory page).

Idempotent: columns and the index are created when missing; keys are computed again from the rows.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TABLE = "memory_payload_fact"
INDEX = "uq_memory_fact_active"
ACTIVE, DELETED = "active", "deleted"
# core.store.memory.tables.UNIT_FIELDS and PAYLOAD_FIELDS["FACT"] at this revision: a version's snapshot
SNAPSHOT_UNIT = (
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
SNAPSHOT_FACT = ("predicate", "object_text", "valid_from", "valid_to")

units = sa.table(
    "memory_units",
    *(sa.column(name) for name in ("id", "owner_id", "updated_at", *SNAPSHOT_UNIT)),
)
facts = sa.table(
    TABLE,
    *(
        sa.column(name)
        for name in (
            "unit_id",
            "owner_id",
            "active_key",
            "subject_entity_id",
            "evidence_unit_ids_json",
            *SNAPSHOT_FACT,
        )
    ),
)
versions = sa.table(
    "memory_unit_versions",
    *(sa.column(n) for n in ("unit_id", "version", "changed_at", "change_kind", "snapshot_json", "note")),
)


def _key(subject_entity_id: int | None, predicate: str, object_text: str) -> str:
    """core.store.memory.tables.fact_key at this revision."""
    identity = json.dumps([subject_entity_id, predicate, object_text], ensure_ascii=False)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def _add_columns(conn: sa.Connection) -> None:
    columns = {c["name"] for c in sa.inspect(conn).get_columns(TABLE)}
    if "owner_id" not in columns:
        op.add_column(TABLE, sa.Column("owner_id", sa.String(255), nullable=True))
    if "active_key" not in columns:
        op.add_column(TABLE, sa.Column("active_key", sa.String(64), nullable=True))
    owner = sa.select(units.c.owner_id).where(units.c.id == facts.c.unit_id).scalar_subquery()
    conn.execute(facts.update().where(facts.c.owner_id.is_(None)).values(owner_id=owner))


def _record(conn: sa.Connection, unit_id: int, change_kind: str, note: str, now: int) -> None:
    """Append the unit's current state as its next version (what MemoryRepository.record_version writes)."""
    row = conn.execute(
        sa.select(*(units.c[n] for n in SNAPSHOT_UNIT), *(facts.c[n] for n in SNAPSHOT_FACT))
        .join(facts, facts.c.unit_id == units.c.id)
        .where(units.c.id == unit_id)
    ).one()
    last = conn.execute(
        sa.select(sa.func.max(versions.c.version)).where(versions.c.unit_id == unit_id)
    ).scalar()
    conn.execute(
        versions.insert().values(
            unit_id=unit_id,
            version=int(last or 0) + 1,
            changed_at=now,
            change_kind=change_kind,
            snapshot_json=json.dumps(dict(row._mapping), ensure_ascii=False),
            note=note,
        )
    )


def _merge(conn: sa.Connection, group: list[Any], now: int) -> None:
    """Merge the group's facts (same person, same fact, all active) into the lowest unit id."""
    keep, *others = sorted(group, key=lambda r: r.unit_id)
    evidence = list(dict.fromkeys(e for r in (keep, *others) for e in json.loads(r.evidence_unit_ids_json)))
    conn.execute(
        facts.update()
        .where(facts.c.unit_id == keep.unit_id)
        .values(evidence_unit_ids_json=json.dumps(evidence))
    )
    conn.execute(
        units.update()
        .where(units.c.id == keep.unit_id)
        .values(
            confidence=max(r.confidence for r in group),
            occurred_at=max(r.occurred_at for r in group),
            updated_at=now,
        )
    )
    ids = [r.unit_id for r in others]
    conn.execute(units.update().where(units.c.id.in_(ids)).values(state=DELETED, updated_at=now))
    conn.execute(facts.update().where(facts.c.unit_id.in_(ids)).values(active_key=None))
    _record(conn, keep.unit_id, "edit", "同じ事実 " + "、".join(f"#{i}" for i in ids) + " を統合", now)
    for unit_id in ids:
        _record(conn, unit_id, "soft_delete", f"同じ事実 #{keep.unit_id} に統合", now)


def _dedupe_and_key(conn: sa.Connection) -> None:
    rows = conn.execute(
        sa.select(
            facts.c.unit_id,
            facts.c.owner_id,
            facts.c.subject_entity_id,
            facts.c.predicate,
            facts.c.object_text,
            facts.c.evidence_unit_ids_json,
            units.c.state,
            units.c.confidence,
            units.c.occurred_at,
        ).join(units, units.c.id == facts.c.unit_id)
    ).all()
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for row in rows:
        if row.state == ACTIVE:
            groups[(row.owner_id, _key(row.subject_entity_id, row.predicate, row.object_text))].append(row)
    now = int(time.time())
    conn.execute(facts.update().values(active_key=None))
    for (_, key), group in groups.items():
        if len(group) > 1:
            _merge(conn, group, now)
        keep = min(r.unit_id for r in group)
        conn.execute(facts.update().where(facts.c.unit_id == keep).values(active_key=key))


def upgrade() -> None:
    conn = op.get_bind()
    _add_columns(conn)
    _dedupe_and_key(conn)
    if INDEX not in {i["name"] for i in sa.inspect(conn).get_indexes(TABLE)}:
        op.create_index(INDEX, TABLE, ["owner_id", "active_key"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
