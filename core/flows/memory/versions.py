"""Analyst edits: every change versioned and revertible; soft delete and restore.
Hard delete lives in core/flows/memory/deletion.py. Only the repository's person's units can be edited
: another person's unit id reads as not found.

An edit made on what a person saw (`expected_version`: the unit's version when the grid was read) is
checked with the unit locked: if the unit changed since, nothing is written and StaleEdit carries the
stored state and the person's edit, so the page can show both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select, update

from core.flows.memory.indexing import index_units
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_FACT,
    PAYLOAD_FIELDS,
    PAYLOAD_TABLES,
    STATE_ACTIVE,
    STATE_DELETED,
    UNIT_FIELDS,
    dumps,
    mine,
    unit_versions,
    units,
)
from core.text.safe import clean_text

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

EDITABLE_UNIT_FIELDS = tuple(f for f in UNIT_FIELDS if f != "kind")


@dataclass(frozen=True, slots=True)
class UnitVersion:
    """One version of a unit: when and how it changed, and the unit as it was then (`snapshot`: the unit's
    and its payload's columns, as stored in JSON)."""

    version: int
    changed_at: int
    change_kind: str  # create | edit | revert | soft_delete | restore
    note: str
    snapshot: dict[str, Any]


class EditError(ValueError):
    """An edit that cannot be applied (unknown unit, unknown field or version); the message is Japanese."""


@dataclass(frozen=True)
class StaleUnit:
    """A unit that changed after the person read it: what is stored now and what they tried to save."""

    unit_id: int
    expected_version: int
    current_version: int
    current: dict[str, Any]  # the editable fields as stored now
    mine: dict[str, Any]  # the fields the person changed, with their values


@dataclass
class StaleEdit(EditError):
    """Some edits were not saved because their units changed since they were read (the others were)."""

    stale: list[StaleUnit]
    saved: dict[int, int] = field(default_factory=dict)  # unit id -> new version, of the edits that applied

    def __str__(self) -> str:
        ids = "、".join(f"#{s.unit_id}" for s in self.stale)
        return f"記憶 {ids} は、表を開いた後に別の操作で変更されています。"


def _apply(conn: Connection, repo: MemoryRepository, unit_id: int, changes: dict[str, Any], now: int) -> str:
    """Write the changes; a fact's key (what "the same fact" means) follows its state and identity, and a
    change that would make it the same as another active fact of the person is refused."""
    kind = conn.execute(select(units.c.kind).where(units.c.id == unit_id, mine(repo.owner_id))).scalar()
    if kind is None:
        raise EditError(f"記憶 #{unit_id} が見つかりません（完全削除された可能性があります）。")
    unit_values = {k: v for k, v in changes.items() if k in EDITABLE_UNIT_FIELDS}
    payload_values = {k: v for k, v in changes.items() if k in PAYLOAD_FIELDS[kind]}
    unknown = set(changes) - set(unit_values) - set(payload_values)
    if unknown:
        raise EditError(f"編集できない項目です: {'、'.join(sorted(unknown))}")
    if isinstance(unit_values.get("topic_tags"), list):
        unit_values["topic_tags"] = dumps(unit_values["topic_tags"])
    conn.execute(update(units).where(units.c.id == unit_id).values(updated_at=now, **unit_values))
    if payload_values:
        table = PAYLOAD_TABLES[kind]
        conn.execute(update(table).where(table.c.unit_id == unit_id).values(**payload_values))
    if kind == KIND_FACT and (twin := repo.sync_fact_key(unit_id, conn=conn)) is not None:
        raise EditError(
            f"記憶 #{unit_id} は、有効な記憶 #{twin} と同じ事実になるため保存できません"
            f"（#{twin} を編集するか、どちらかを削除してください）。"
        )
    return str(kind)


def edit_unit(
    repo: MemoryRepository,
    collection: Collection | None,
    unit_id: int,
    changes: dict[str, Any],
    now: int | None = None,
    note: str = "",
    *,
    expected_version: int | None = None,
) -> int:
    """Apply an analyst's edit, record it as a new version, re-index; returns the new version number.

    With `expected_version` (the version the person saw), a unit changed since raises StaleEdit and
    nothing is written; an edit equal to what is stored is no change, whatever the version.
    """
    now = repo.now() if now is None else now
    changes = {k: clean_text(v)[0] if isinstance(v, str) else v for k, v in changes.items()}  # core.text.safe
    note = clean_text(note)[0]
    with repo.begin() as conn:
        if not repo.lock_unit(conn, unit_id):
            raise EditError(f"記憶 #{unit_id} が見つかりません（完全削除された可能性があります）。")
        before = repo.snapshot(unit_id, conn=conn)
        real = {k: v for k, v in changes.items() if before.get(k) != v}
        latest = repo.latest_version(unit_id, conn=conn)
        if not real:
            return latest
        if expected_version is not None and latest != expected_version:
            raise StaleEdit([StaleUnit(unit_id, expected_version, latest, before, dict(changes))])
        _apply(conn, repo, unit_id, real, now)
        version = repo.record_version(unit_id, "edit", now, note, conn=conn)
        _reindex(conn, collection, unit_id)
    return version


def revert_unit(
    repo: MemoryRepository,
    collection: Collection | None,
    unit_id: int,
    version: int,
    now: int | None = None,
) -> int:
    """Restore the unit to the state of `version`, recorded as a new version (history is never rewritten)."""
    now = repo.now() if now is None else now
    with repo.begin() as conn:
        if not repo.owns(unit_id, conn=conn):
            raise EditError(f"記憶 #{unit_id} が見つかりません（完全削除された可能性があります）。")
        row = conn.execute(
            select(unit_versions.c.snapshot_json).where(
                (unit_versions.c.unit_id == unit_id) & (unit_versions.c.version == version)
            )
        ).first()
        if row is None:
            raise EditError(f"記憶 #{unit_id} に版 v{version} はありません。")
        target = json.loads(row.snapshot_json)
        target.pop("kind", None)
        _apply(conn, repo, unit_id, target, now)
        new_version = repo.record_version(unit_id, "revert", now, f"v{version} に戻す", conn=conn)
        _reindex(conn, collection, unit_id)
    return new_version


def soft_delete(
    repo: MemoryRepository, collection: Collection | None, unit_id: int, now: int | None = None
) -> int:
    """Mark a unit deleted (kept, revertible): retrieval skips it."""
    now = repo.now() if now is None else now
    with repo.begin() as conn:
        _apply(conn, repo, unit_id, {"state": STATE_DELETED}, now)
        return repo.record_version(unit_id, "soft_delete", now, conn=conn)


def restore(
    repo: MemoryRepository, collection: Collection | None, unit_id: int, now: int | None = None
) -> int:
    """Undo a soft delete."""
    now = repo.now() if now is None else now
    with repo.begin() as conn:
        _apply(conn, repo, unit_id, {"state": STATE_ACTIVE}, now)
        return repo.record_version(unit_id, "restore", now, conn=conn)


def versions_of(repo: MemoryRepository, unit_id: int) -> list[UnitVersion]:
    """Every version of the person's unit, oldest first, with its snapshot (empty for another's)."""
    with repo.connect() as conn:
        rows = (
            conn.execute(
                select(unit_versions)
                .join(units, units.c.id == unit_versions.c.unit_id)
                .where(unit_versions.c.unit_id == unit_id, mine(repo.owner_id))
                .order_by(unit_versions.c.version)
            )
            .mappings()
            .all()
        )
    return [
        UnitVersion(
            r["version"], r["changed_at"], r["change_kind"], r["note"] or "", json.loads(r["snapshot_json"])
        )
        for r in rows
    ]


def _reindex(conn: Connection, collection: Collection | None, unit_id: int) -> None:
    index_units(conn, collection, [unit_id])
