"""The knowledge base: saved knowledge entries with versioned edits (who / when / source interview) (spec 01 §7.2).

SQLAlchemy Core on the shared `metadata`; every edit keeps a row in knowledge_entry_versions. Times are
UTC epoch seconds from the repository's clock. The knowledge base is the team's: shared by
everyone, and every version records who wrote it, the signed-in person's name (`*_by`) and id (`*_by_id`);
versions written before there were people keep the name typed then and belong to the local person.
Keyword search: core/store/knowledge/search.py (knowledge_entry_keys, rewritten with every save).

Version numbers come from the database: an edit moves the entry from the version it read to
the next one with a compare-and-set UPDATE (`... WHERE version = <read>`), which no two writers can both
win on SQLite or PostgreSQL, and (entry_id, version) is unique. An edit made on an entry that changed
since it was opened (`expected_version`) is refused with StaleEntryError, carrying both versions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Connection, ForeignKey, Index, Integer, String, Table, Text, select, update
from sqlalchemy.sql import ColumnElement

from core.people import MAX_ID_CHARS, Person
from core.store.base import EpochSeconds, Repository, inserted_id
from core.store.db import metadata
from core.store.knowledge.search import (
    ENTRY_FIELDS,
    clause_condition,
    fields_keys,
    knowledge_entry_keys,
    relevance,
    search_condition,
    write_keys,
)
from core.text.japanese import split_terms
from core.text.safe import clean_text
from core.text.textnorm import fold

__all__ = [
    "CREATED_NOTE",
    "ENTRY_FIELDS",
    "KnowledgeBaseRepository",
    "StaleEntryError",
    "entry_fields",
    "knowledge_entries",
    "knowledge_entry_keys",
    "knowledge_entry_versions",
]

ORDERS = ("relevance", "newest", "oldest")  # list_entries: search relevance (then newest), or update time

# The six fields of an entry (schemas/knowledge_llm_entry.schema.json; the flow's KNOWLEDGE_FIELDS, same order):
# ENTRY_FIELDS, from core/store/knowledge/search.py.
CREATED_NOTE = "作成"
MAX_SAVE_ATTEMPTS = 100  # compare-and-set retries of an unconditional save before giving up (contention)

knowledge_entries = Table(
    "knowledge_entries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *(Column(name, Text, nullable=False, default="") for name in ENTRY_FIELDS),
    Column("version", Integer, nullable=False, default=1),
    Column("source_interview_id", String(32)),
    Column("created_at", EpochSeconds, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_by_id", String(MAX_ID_CHARS)),
    Column("updated_at", EpochSeconds, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("updated_by_id", String(MAX_ID_CHARS)),
    # an archived entry is hidden from lists, searches and similar-entry lookups; it keeps its versions
    Column("archived_at", EpochSeconds),  # NULL: active
    Column("archived_by", String),
    Column("archived_by_id", String(MAX_ID_CHARS)),
    # the version whose vector is in the index (migration v0017; core/store/knowledge/index_marks.py)
    Column("indexed_version", Integer, nullable=True),
)

knowledge_entry_versions = Table(
    "knowledge_entry_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "entry_id",
        Integer,
        ForeignKey("knowledge_entries.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("version", Integer, nullable=False),
    *(Column(name, Text, nullable=False, default="") for name in ENTRY_FIELDS),
    Column("edited_at", EpochSeconds, nullable=False),
    Column("edited_by", String, nullable=False),
    Column("edited_by_id", String(MAX_ID_CHARS)),
    Column("note", String, nullable=False, default=""),
    Index("uq_knowledge_entry_version", "entry_id", "version", unique=True),
)


def entry_fields(entry: Mapping[str, Any]) -> dict[str, str]:
    """The six fields of `entry` as strings ("" when missing or empty), made safe for storage (core.text.safe:
    control characters and lone surrogates cannot reach the shared table)."""
    return {name: clean_text(entry.get(name, "") or "")[0] for name in ENTRY_FIELDS}


class StaleEntryError(Exception):
    """The entry changed since the editor opened it: nothing was saved. `current` is the stored entry now
    (with its version and who saved it), `mine` the six fields the editor tried to save."""

    def __init__(self, entry_id: int, expected_version: int, current: dict[str, Any], mine: dict[str, str]):
        super().__init__(
            f"knowledge entry {entry_id} is at version {current['version']}, not {expected_version}"
        )
        self.entry_id = entry_id
        self.expected_version = expected_version
        self.current = current
        self.mine = mine


class KnowledgeBaseRepository(Repository):
    """Knowledge base entries and their versions (`KnowledgeBaseRepository(engine, clock)`): the team's,
    shared by everyone; every write names its author (a Person)."""

    def save_entry(
        self, entry: Mapping[str, Any], *, by: Person, source_interview_id: str | None = None
    ) -> int:
        """Save a new knowledge base entry (version 1) written by `by`; returns its id."""
        ts, fields = self.now(), entry_fields(entry)
        keys = fields_keys(fields)
        with self.engine.begin() as conn:
            entry_id = inserted_id(
                conn.execute(
                    knowledge_entries.insert().values(
                        **fields,
                        version=1,
                        source_interview_id=source_interview_id,
                        created_at=ts,
                        created_by=by.name,
                        created_by_id=by.id,
                        updated_at=ts,
                        updated_by=by.name,
                        updated_by_id=by.id,
                    )
                )
            )
            conn.execute(
                knowledge_entry_versions.insert().values(
                    entry_id=entry_id,
                    version=1,
                    **fields,
                    edited_at=ts,
                    edited_by=by.name,
                    edited_by_id=by.id,
                    note=CREATED_NOTE,
                )
            )
            write_keys(conn, entry_id, keys)
        return entry_id

    def update_entry(
        self,
        entry_id: int,
        entry: Mapping[str, Any],
        *,
        by: Person,
        note: str = "",
        expected_version: int | None = None,
    ) -> int:
        """Edit an entry as `by`: a new version row is kept; returns the new version (unchanged if nothing
        changed).

        With `expected_version` (the version the editor opened), an entry saved by someone else since then
        raises StaleEntryError and nothing is written; without it, the edit applies to the newest version.
        Raises KeyError for an unknown id.
        """
        fields, note = entry_fields(entry), clean_text(note)[0]
        keys = fields_keys(fields)  # outside the transaction: the entry's row stays locked for less time
        for _ in range(MAX_SAVE_ATTEMPTS):
            with self.engine.begin() as conn:
                saved = self._save_version(conn, entry_id, fields, keys, by, note, expected_version)
            if saved is not None:
                return saved
        raise RuntimeError(f"knowledge entry {entry_id}: too many concurrent saves")

    def _save_version(
        self,
        conn: Connection,
        entry_id: int,
        fields: dict[str, str],
        keys: dict[str, str],
        by: Person,
        note: str,
        expected_version: int | None,
    ) -> int | None:
        """One compare-and-set attempt: the saved (or unchanged) version, or None when another writer won.

        The read locks the entry's row where the engine can (PostgreSQL: FOR UPDATE; SQLite has no row locks
        and serializes writers itself), so under contention writers queue instead of retrying."""
        row = (
            conn.execute(
                select(knowledge_entries).where(knowledge_entries.c.id == entry_id).with_for_update()
            )
            .mappings()
            .first()
        )
        if row is None:
            raise KeyError(entry_id)
        read = int(row["version"])
        if all(row[name] == fields[name] for name in ENTRY_FIELDS):
            return read
        if expected_version is not None and read != expected_version:
            raise StaleEntryError(entry_id, expected_version, dict(row), fields)
        ts = self.now()
        won = conn.execute(
            update(knowledge_entries)
            .where(knowledge_entries.c.id == entry_id, knowledge_entries.c.version == read)
            .values(**fields, version=read + 1, updated_at=ts, updated_by=by.name, updated_by_id=by.id)
        )
        if won.rowcount != 1:
            return None
        conn.execute(
            knowledge_entry_versions.insert().values(
                entry_id=entry_id,
                version=read + 1,
                **fields,
                edited_at=ts,
                edited_by=by.name,
                edited_by_id=by.id,
                note=note,
            )
        )
        write_keys(conn, entry_id, keys)
        return read + 1

    def get_entry(self, entry_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(knowledge_entries).where(knowledge_entries.c.id == entry_id))
                .mappings()
                .first()
            )
        return dict(row) if row else None

    def entry_for_interview(self, interview_id: str) -> dict[str, Any] | None:
        """The latest knowledge base entry saved from an interview (so a resumed interview updates it)."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    select(knowledge_entries)
                    .where(knowledge_entries.c.source_interview_id == interview_id)
                    .order_by(knowledge_entries.c.id.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
        return dict(row) if row else None

    def entry_versions(self, entry_id: int) -> list[dict[str, Any]]:
        """Every version of an entry, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(knowledge_entry_versions)
                .where(knowledge_entry_versions.c.entry_id == entry_id)
                .order_by(knowledge_entry_versions.c.version, knowledge_entry_versions.c.id)
            ).mappings()
            return [dict(r) for r in rows]

    def list_entries(
        self,
        *,
        search: str = "",
        contract_types: Sequence[str] = (),
        clause: str = "",
        archived: bool = False,
        order: str = "relevance",
    ) -> list[dict[str, Any]]:
        """Active entries (`archived=True`: the archived ones only), filtered and sorted.

        `search` ANDs its terms over every field (see the module docstring), `contract_types` filters
        exactly, `clause` keeps entries whose target clause contains it (folded: 第８条 = 第8条).
        `order`: "relevance" (entries containing more terms as written first, then newest edit), "newest"
        or "oldest" (update time; ties: newest / oldest id)."""
        if order not in ORDERS:
            raise ValueError(f"unknown order {order!r}")
        c = knowledge_entries.c
        by_time = (
            (c.updated_at.asc(), c.id.asc()) if order == "oldest" else (c.updated_at.desc(), c.id.desc())
        )
        query = (
            select(knowledge_entries)
            .outerjoin(knowledge_entry_keys, knowledge_entry_keys.c.entry_id == c.id)
            .where(c.archived_at.is_not(None) if archived else c.archived_at.is_(None))
            .order_by(*by_time)
        )
        for condition in (search_condition(search), clause_condition(clause)):
            if condition is not None:
                query = query.where(condition)
        if contract_types:
            query = query.where(c.contract_type.in_(list(contract_types)))
        with self.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
        if search.strip() and order == "relevance":
            terms = split_terms(search)
            rows.sort(key=lambda r: -relevance(terms, r))  # stable: newest first among equals
        if clause.strip():  # the SQL filter is a coarse LIKE; the folded comparison decides
            rows = [r for r in rows if fold(clause.strip()) in fold(r["target_clause"])]
        return rows

    def contract_types(self) -> list[str]:
        """Distinct contract types of the active entries (for the filter), in code point order on every engine."""
        return self._distinct(knowledge_entries.c.contract_type)

    def clauses(self, contract_types: Sequence[str] = ()) -> list[str]:
        """Distinct target clauses of the active entries (of `contract_types` when given), in code point order."""
        condition = knowledge_entries.c.contract_type.in_(list(contract_types)) if contract_types else None
        return self._distinct(knowledge_entries.c.target_clause, condition)

    def _distinct(self, column: Any, condition: ColumnElement[bool] | None = None) -> list[str]:
        query = select(column).distinct().where(knowledge_entries.c.archived_at.is_(None))
        if condition is not None:
            query = query.where(condition)
        with self.engine.connect() as conn:
            return sorted(r[0] for r in conn.execute(query) if r[0])

    def get_entries(self, entry_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The stored entries of `entry_ids` (archived ones included) by id; unknown ids are left out."""
        if not entry_ids:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(select(knowledge_entries).where(knowledge_entries.c.id.in_(list(entry_ids))))
            return {int(r["id"]): dict(r) for r in rows.mappings()}

    def active_versions(self) -> dict[int, int]:
        """Every active entry's id and version (what the vector index must hold)."""
        c = knowledge_entries.c
        with self.engine.connect() as conn:
            rows = conn.execute(select(c.id, c.version).where(c.archived_at.is_(None)))
            return {int(i): int(v) for i, v in rows}

    def set_archived(self, entry_id: int, archived: bool, *, by: Person) -> bool:
        """Archive (`archived=True`) or restore an entry as `by`; its fields and versions stay. True when it
        changed; raises KeyError for an unknown id."""
        c = knowledge_entries.c
        values = (
            {"archived_at": self.now(), "archived_by": by.name, "archived_by_id": by.id}
            if archived
            else {"archived_at": None, "archived_by": None, "archived_by_id": None}
        )
        state = c.archived_at.is_(None) if archived else c.archived_at.is_not(None)
        with self.engine.begin() as conn:
            if conn.execute(select(c.id).where(c.id == entry_id)).first() is None:
                raise KeyError(entry_id)
            changed = conn.execute(update(knowledge_entries).where(c.id == entry_id, state).values(**values))
            return changed.rowcount == 1
