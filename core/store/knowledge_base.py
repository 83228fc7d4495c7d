"""The knowledge base: saved knowledge entries with versioned edits (who / when / source interview) (spec 01 §7.2).

SQLAlchemy Core on the shared `metadata`; every edit keeps a row in knowledge_entry_versions. Times are
UTC epoch seconds from the repository's clock. The knowledge base is the team's (issue #14): shared by
everyone, and every version records who wrote it, the signed-in person's name (`*_by`) and id (`*_by_id`);
versions written before there were people keep the name typed then and belong to the local person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Connection, ForeignKey, Integer, String, Table, Text, or_, select, update

from core.people import LOCAL_PERSON_ID, MAX_ID_CHARS, Person
from core.store.base import Repository, inserted_id
from core.store.db import metadata
from core.store.owners import add_column

# The six fields of an entry (schemas/knowledge_llm_entry.schema.json; the flow's KNOWLEDGE_FIELDS, same order).
ENTRY_FIELDS = (
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)
CREATED_NOTE = "作成"

knowledge_entries = Table(
    "knowledge_entries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *(Column(name, Text, nullable=False, default="") for name in ENTRY_FIELDS),
    Column("version", Integer, nullable=False, default=1),
    Column("source_interview_id", String(32)),
    Column("created_at", Integer, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_by_id", String(MAX_ID_CHARS)),
    Column("updated_at", Integer, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("updated_by_id", String(MAX_ID_CHARS)),
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
    Column("edited_at", Integer, nullable=False),
    Column("edited_by", String, nullable=False),
    Column("edited_by_id", String(MAX_ID_CHARS)),
    Column("note", String, nullable=False, default=""),
)


def entry_fields(entry: Mapping[str, Any]) -> dict[str, str]:
    """The six fields of `entry` as strings ("" when missing or empty)."""
    return {name: str(entry.get(name, "") or "") for name in ENTRY_FIELDS}


class KnowledgeBaseRepository(Repository):
    """Knowledge base entries and their versions (`KnowledgeBaseRepository(engine, clock)`): the team's,
    shared by everyone; every write names its author (a Person)."""

    def save_entry(
        self, entry: Mapping[str, Any], *, by: Person, source_interview_id: str | None = None
    ) -> int:
        """Save a new knowledge base entry (version 1) written by `by`; returns its id."""
        ts, fields = self.now(), entry_fields(entry)
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
        return entry_id

    def update_entry(self, entry_id: int, entry: Mapping[str, Any], *, by: Person, note: str = "") -> int:
        """Edit an entry as `by`: a new version row is kept; returns the new version (unchanged if nothing
        changed).

        Raises KeyError for an unknown id.
        """
        ts, fields = self.now(), entry_fields(entry)
        with self.engine.begin() as conn:
            row = (
                conn.execute(select(knowledge_entries).where(knowledge_entries.c.id == entry_id))
                .mappings()
                .first()
            )
            if row is None:
                raise KeyError(entry_id)
            if all(row[name] == fields[name] for name in ENTRY_FIELDS):
                return int(row["version"])
            version = int(row["version"]) + 1
            conn.execute(
                update(knowledge_entries)
                .where(knowledge_entries.c.id == entry_id)
                .values(**fields, version=version, updated_at=ts, updated_by=by.name, updated_by_id=by.id)
            )
            conn.execute(
                knowledge_entry_versions.insert().values(
                    entry_id=entry_id,
                    version=version,
                    **fields,
                    edited_at=ts,
                    edited_by=by.name,
                    edited_by_id=by.id,
                    note=note,
                )
            )
        return version

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

    def list_entries(self, *, search: str = "", contract_types: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Saved entries, newest edit first (ties: newest id first); `search` matches any field,
        `contract_types` filters exactly."""
        query = select(knowledge_entries).order_by(
            knowledge_entries.c.updated_at.desc(), knowledge_entries.c.id.desc()
        )
        if search.strip():
            pattern = f"%{search.strip()}%"
            query = query.where(or_(*(knowledge_entries.c[name].like(pattern) for name in ENTRY_FIELDS)))
        if contract_types:
            query = query.where(knowledge_entries.c.contract_type.in_(list(contract_types)))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def contract_types(self) -> list[str]:
        """Distinct contract types in the knowledge base (for the filter)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(knowledge_entries.c.contract_type)
                .distinct()
                .order_by(knowledge_entries.c.contract_type)
            )
            return [r[0] for r in rows if r[0]]


def upgrade(conn: Connection) -> None:
    """Entries and versions written before there were people: the author's id is the local person's
    (the name typed then is kept). Idempotent."""
    for table, column in (
        (knowledge_entries, "created_by_id"),
        (knowledge_entries, "updated_by_id"),
        (knowledge_entry_versions, "edited_by_id"),
    ):
        add_column(conn, table, column, LOCAL_PERSON_ID)
