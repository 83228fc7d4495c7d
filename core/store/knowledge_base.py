"""The knowledge base: saved knowledge entries with versioned edits (who / when / source interview) (spec 01 §7.2).

SQLAlchemy Core on the shared `metadata`; every edit keeps a row in knowledge_entry_versions. Times are
UTC epoch seconds from the repository's clock. The knowledge base is the team's (issue #14): shared by
everyone, and every version records who wrote it, the signed-in person's name (`*_by`) and id (`*_by_id`);
versions written before there were people keep the name typed then and belong to the local person.

Search (issue 12 item 2): knowledge_entry_keys keeps, per entry, its folded text (core.textnorm.fold: ＮＤＡ
= NDA, 第８条 = 第8条) and its Sudachi lexical keys (core.japanese). A query's terms (split at spaces and 、)
are ANDed; a term matches an entry whose folded text contains it, or whose keys contain a key of each of
its words (締め切り finds 締切). Entries with the terms as written in their title or clause come first
(`relevance`), then the newest. The keys are of the shared entries: they have no owner, like the entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    and_,
    or_,
    select,
    update,
)

from core.japanese import lexical_document, split_terms, term_keys
from core.people import LOCAL_PERSON_ID, MAX_ID_CHARS, Person
from core.store.base import Repository, inserted_id
from core.store.db import metadata
from core.store.owners import add_column
from core.textnorm import fold

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


knowledge_entry_keys = Table(
    "knowledge_entry_keys",
    metadata,
    Column("entry_id", Integer, ForeignKey("knowledge_entries.id", ondelete="CASCADE"), primary_key=True),
    Column("folded", Text, nullable=False, default=""),  # core.textnorm.fold of the six fields
    Column("lexical", Text, nullable=False, default=""),  # " " + lexical_document + " " (LIKE '% key %')
)


def entry_fields(entry: Mapping[str, Any]) -> dict[str, str]:
    """The six fields of `entry` as strings ("" when missing or empty)."""
    return {name: str(entry.get(name, "") or "") for name in ENTRY_FIELDS}


def _write_keys(conn: Connection, entry_id: int, fields: Mapping[str, str]) -> None:
    text = "\n".join(fields[name] for name in ENTRY_FIELDS)
    conn.execute(knowledge_entry_keys.delete().where(knowledge_entry_keys.c.entry_id == entry_id))
    conn.execute(
        knowledge_entry_keys.insert().values(
            entry_id=entry_id, folded=fold(text), lexical=f" {lexical_document(text)} "
        )
    )


# How much a term found in a field counts when ordering search results (the title and clause name say what an
# entry is about; the contract type is shared by many entries).
FIELD_WEIGHTS = {
    "knowledge_title": 3,
    "target_clause": 3,
    "review_points": 2,
    "action_plan": 1,
    "clause_sample": 1,
    "contract_type": 1,
}


def relevance(terms: Sequence[str], entry: Mapping[str, Any]) -> int:
    """Sum over the terms of the weight of the best field containing the term as written (after folding)."""
    fields = {name: fold(str(entry.get(name) or "")) for name in FIELD_WEIGHTS}
    return sum(max((w for name, w in FIELD_WEIGHTS.items() if t in fields[name]), default=0) for t in terms)


def search_condition(search: str) -> ColumnElement[bool] | None:
    """The WHERE clause of a keyword search (see the module docstring); None for an empty search."""
    terms = term_keys(search)
    if not terms:
        return None
    keys = knowledge_entry_keys.c
    conditions = []
    for term, groups in terms:
        lexical = [or_(*(keys.lexical.contains(f" {k} ", autoescape=True) for k in g)) for g in groups]
        matched = keys.folded.contains(term, autoescape=True)
        conditions.append(or_(matched, and_(*lexical)) if lexical else matched)
    return and_(*conditions)


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
            _write_keys(conn, entry_id, fields)
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
            _write_keys(conn, entry_id, fields)
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
        """Saved entries, newest edit first (ties: newest id first); `search` ANDs its terms over every field
        (see the module docstring; entries containing more terms as written come first), `contract_types`
        filters exactly."""
        query = (
            select(knowledge_entries)
            .outerjoin(knowledge_entry_keys, knowledge_entry_keys.c.entry_id == knowledge_entries.c.id)
            .order_by(knowledge_entries.c.updated_at.desc(), knowledge_entries.c.id.desc())
        )
        condition = search_condition(search)
        if condition is not None:
            query = query.where(condition)
        if contract_types:
            query = query.where(knowledge_entries.c.contract_type.in_(list(contract_types)))
        with self.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
        if condition is not None:
            terms = split_terms(search)
            rows.sort(key=lambda r: -relevance(terms, r))  # stable: newest first among equals
        return rows

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
    (the name typed then is kept). Entries saved before the search keys existed get their keys. Idempotent:
    columns are added once, only entries without keys are keyed."""
    for table, column in (
        (knowledge_entries, "created_by_id"),
        (knowledge_entries, "updated_by_id"),
        (knowledge_entry_versions, "edited_by_id"),
    ):
        add_column(conn, table, column, LOCAL_PERSON_ID)
    missing = conn.execute(
        select(knowledge_entries)
        .outerjoin(knowledge_entry_keys, knowledge_entry_keys.c.entry_id == knowledge_entries.c.id)
        .where(knowledge_entry_keys.c.entry_id.is_(None))
    ).mappings()
    for row in list(missing):
        _write_keys(conn, int(row["id"]), entry_fields(dict(row)))
