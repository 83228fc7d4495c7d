"""Keyword search of the knowledge base: per-entry search keys and the query's condition.

knowledge_entry_keys keeps, per entry, its folded text (core.text.textnorm.fold: ＮＤＡ = NDA, 第８条 = 第8条) and
its Sudachi lexical keys (core.text.japanese.lexical_document, the one key function). A query's terms (split at
spaces and 、) are ANDed; a term matches an entry whose folded text contains it, or whose keys contain a key
of each of its words (締め切り finds 締切). Both keys are lower case and matched with LIKE, so SQLite and
PostgreSQL find the same entries (on PostgreSQL pg_trgm GIN indexes serve the LIKEs, migration v0005).
Entries with the terms as written in their title or clause come first (`relevance`), then the newest. The
keys are of the shared entries: they have no owner, like the entries.
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
    Table,
    Text,
    and_,
    column,
    or_,
    select,
    table,
)

from core.store.db import metadata
from core.text.japanese import lexical_document, term_keys
from core.text.textnorm import fold

knowledge_entry_keys = Table(
    "knowledge_entry_keys",
    metadata,
    Column("entry_id", Integer, ForeignKey("knowledge_entries.id", ondelete="CASCADE"), primary_key=True),
    Column("folded", Text, nullable=False, default=""),  # core.text.textnorm.fold of the six fields
    Column("lexical", Text, nullable=False, default=""),  # " " + lexical_document + " " (LIKE '% key %')
)

ENTRY_FIELDS = (  # core.store.knowledge.entries.ENTRY_FIELDS (that module imports this one)
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)
_entries = table("knowledge_entries", column("id"), *(column(name) for name in ENTRY_FIELDS))

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


def entry_keys(text: str) -> dict[str, str]:
    """The key columns of an entry whose six fields, one per line, are `text`."""
    return {"folded": fold(text), "lexical": f" {lexical_document(text)} "}


def fields_keys(fields: Mapping[str, Any]) -> dict[str, str]:
    """The key columns of an entry's six fields (computed before a transaction: Sudachi takes milliseconds)."""
    return entry_keys("\n".join(str(fields.get(name) or "") for name in ENTRY_FIELDS))


def write_keys(conn: Connection, entry_id: int, keys: Mapping[str, str]) -> None:
    """(Re)write an entry's search keys (`keys`: from entry_keys / fields_keys)."""
    conn.execute(knowledge_entry_keys.delete().where(knowledge_entry_keys.c.entry_id == entry_id))
    conn.execute(knowledge_entry_keys.insert().values(entry_id=entry_id, **keys))


def backfill_keys(conn: Connection) -> int:
    """Key every entry that has no keys (migration v0007; idempotent); returns how many were keyed."""
    keyed = select(knowledge_entry_keys.c.entry_id)
    missing = conn.execute(select(_entries).where(_entries.c.id.not_in(keyed))).all()
    for row in missing:
        write_keys(conn, int(row.id), fields_keys({name: getattr(row, name) for name in ENTRY_FIELDS}))
    return len(missing)


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


def clause_condition(clause: str) -> ColumnElement[bool] | None:
    """A coarse WHERE clause for a clause filter (the folded clause anywhere in the entry; the caller keeps the
    entries whose target clause contains it); None for an empty clause."""
    wanted = clause.strip()
    if not wanted:
        return None
    return knowledge_entry_keys.c.folded.contains(fold(wanted), autoescape=True)
