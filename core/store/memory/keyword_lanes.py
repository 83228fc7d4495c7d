"""The memory keyword lanes, one interface over two engines.

FTS5 `unicode61` cannot find ordinary Japanese words inside a sentence, so the keyword lane uses a trigram
index (terms of 3+ characters) plus a 2-character index (space-separated 2-character tokens) for words
such as 締切. The lexical index adds the unit's Sudachi keys (core.text.japanese.lexical_document, the
one key function both engines consume), so ねこ meets 猫 and 締め切り meets 締切. A unicode61 index over the
raw text exists only as the comparison baseline (tests, benchmark). Lanes are named by the FTS_* constants.
On SQLite they are FTS5 tables (core/store/memory/lanes_sqlite.py); on PostgreSQL, documents ranked with the
same BM25 (core/store/memory/lanes_pg.py). The flow computes the documents and the query terms
(core/flows/memory/text.py) and passes them in, so both engines search the same keys and return the same
units in the same order (a parity test checks it). Every search returns only the units of the person asking
(memory_units.owner_id).
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Connection

from core.store.memory import lanes_pg as memory_fts_pg
from core.store.memory import lanes_sqlite as memory_fts_sqlite
from core.store.memory.lanes_sqlite import (
    FTS_BIGRAM,
    FTS_LEXICAL,
    FTS_TABLES,
    FTS_TRIGRAM,
    FTS_UNICODE61,
)
from core.text.japanese import lexical_document

__all__ = [
    "FTS_BIGRAM",
    "FTS_LEXICAL",
    "FTS_TABLES",
    "FTS_TRIGRAM",
    "FTS_UNICODE61",
    "backfill_lexical",
    "ensure_unicode61_baseline",
    "fts_bodies",
    "fts_count",
    "fts_delete",
    "fts_search",
    "fts_upsert",
]


class Lexicon(Protocol):
    """What each engine's module provides (core/store/memory/lanes_sqlite.py, core/store/memory/lanes_pg.py)."""

    def upsert(
        self, conn: Connection, unit_id: int, body: str, bigram_body: str, lexical_body: str
    ) -> None: ...
    def delete(self, conn: Connection, unit_id: int) -> None: ...
    def bodies(self, conn: Connection, unit_ids: list[int]) -> dict[int, str]: ...
    def search(
        self, conn: Connection, table: str, terms: list[str], k: int, owner_id: str
    ) -> list[tuple[int, float]]: ...
    def count(self, conn: Connection, table: str, unit_id: int) -> int: ...
    def lexical_missing(self, conn: Connection) -> list[tuple[int, str]]: ...
    def write_lexical(self, conn: Connection, unit_id: int, lexical_body: str) -> None: ...
    def ensure_unicode61_baseline(self, conn: Connection) -> None: ...


SQLITE: Lexicon = memory_fts_sqlite
POSTGRESQL: Lexicon = memory_fts_pg


def _engine(conn: Connection) -> Lexicon:
    return POSTGRESQL if conn.dialect.name == "postgresql" else SQLITE


def fts_upsert(conn: Connection, unit_id: int, body: str, bigram_body: str, lexical_body: str) -> None:
    """Index (or re-index) one unit's search text: normalized text, 2-character tokens, lexical keys."""
    _engine(conn).upsert(conn, unit_id, body, bigram_body, lexical_body)


def fts_delete(conn: Connection, unit_id: int) -> None:
    """Remove one unit from every lane."""
    _engine(conn).delete(conn, unit_id)


def fts_bodies(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    """The indexed search text of each unit (what rerank compares against)."""
    if not unit_ids:
        return {}
    return _engine(conn).bodies(conn, unit_ids)


def fts_search(
    conn: Connection, table: str, terms: list[str], k: int, owner_id: str
) -> list[tuple[int, float]]:
    """(unit_id, bm25) of `owner_id`'s best `k` units matching any term, best first (bm25: lower is better;
    ties by id; the statistics are the whole lane's, as FTS5's are)."""
    if not terms:
        return []
    return _engine(conn).search(conn, table, terms, k, owner_id)


def fts_count(conn: Connection, table: str, unit_id: int) -> int:
    """How many rows of lane `table` a unit has (0 or 1; used to check deletes)."""
    return _engine(conn).count(conn, table, unit_id)


def backfill_lexical(conn: Connection) -> int:
    """Give every unit indexed without lexical keys its keys (migration v0005; idempotent: only missing rows).
    The keys are computed from the trigram lane's normalized text, which keys the same as the original.
    Returns how many units were keyed."""
    lexicon = _engine(conn)
    missing = lexicon.lexical_missing(conn)
    for unit_id, body in missing:
        lexicon.write_lexical(conn, unit_id, lexical_document(body))
    return len(missing)


def ensure_unicode61_baseline(conn: Connection) -> None:
    """(Re)build the unicode61 baseline lane from the trigram lane's text (tests and benchmark only)."""
    _engine(conn).ensure_unicode61_baseline(conn)
