"""FTS5 tables of the companion memory: a trigram index, a 2-character index, and a unicode61 baseline.

Issue 5: FTS5 `unicode61` cannot find ordinary Japanese words inside a sentence, so the keyword lane
uses the `trigram` tokenizer (terms of 3+ characters) plus a bigram table (space-separated
2-character tokens under unicode61) for words such as 締切. Issue 12 adds the lexical index: the unit's
Sudachi keys (core.japanese.lexical_document, the one key function a PostgreSQL index consumes as well) under
unicode61, so ねこ meets 猫 and 締め切り meets 締切. The unicode61 table over the raw text exists only as the
comparison baseline (tests, benchmark). Row ids are unit ids; every search (lexical included) joins
memory_units so that only one person's units are ever found (issue #14).
"""

from __future__ import annotations

from sqlalchemy import DDL, Connection, event, text

from core.japanese import lexical_document
from core.store.db import metadata

FTS_TRIGRAM = "memory_fts_trigram"
FTS_BIGRAM = "memory_fts_bigram"
FTS_LEXICAL = "memory_fts_lexical"
FTS_UNICODE61 = "memory_fts_unicode61"
FTS_TABLES = (FTS_TRIGRAM, FTS_BIGRAM, FTS_LEXICAL)

_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TRIGRAM} USING fts5(body, tokenize='trigram')",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_BIGRAM} USING fts5(body, tokenize='unicode61')",
    # keys are whole words separated by spaces; diacritics kept (ガ is not カ)
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_LEXICAL} USING fts5(body, tokenize='unicode61 remove_diacritics 0')",
)
for _statement in _DDL:
    _create = DDL(_statement)  # type: ignore[no-untyped-call]  # SQLAlchemy's DDL.__init__ is unannotated
    event.listen(metadata, "after_create", _create.execute_if(dialect="sqlite"))


def fts_upsert(conn: Connection, unit_id: int, body: str, bigram_body: str, lexical_body: str) -> None:
    """Index (or re-index) one unit's search text: normalized text, 2-character tokens, lexical keys."""
    fts_delete(conn, unit_id)
    for table, value in ((FTS_TRIGRAM, body), (FTS_BIGRAM, bigram_body), (FTS_LEXICAL, lexical_body)):
        conn.execute(text(f"INSERT INTO {table}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": value})


def fts_delete(conn: Connection, unit_id: int) -> None:
    """Remove one unit from both indexes."""
    for table in FTS_TABLES:
        conn.execute(text(f"DELETE FROM {table} WHERE rowid = :id"), {"id": unit_id})


def fts_bodies(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    """The indexed search text of each unit (what rerank compares against)."""
    if not unit_ids:
        return {}
    marks = ",".join(str(int(i)) for i in unit_ids)
    rows = conn.execute(text(f"SELECT rowid, body FROM {FTS_TRIGRAM} WHERE rowid IN ({marks})"))
    return {int(r[0]): r[1] for r in rows}


def _match_expr(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts_search(
    conn: Connection, table: str, terms: list[str], k: int, owner_id: str
) -> list[tuple[int, float]]:
    """(unit_id, bm25) of `owner_id`'s best `k` units matching any term, best first (bm25: lower is better)."""
    if not terms:
        return []
    rows = conn.execute(
        text(
            f"SELECT {table}.rowid, bm25({table}) AS s FROM {table} "
            f"JOIN memory_units ON memory_units.id = {table}.rowid "
            f"WHERE {table} MATCH :q AND memory_units.owner_id = :owner ORDER BY s LIMIT :k"
        ),
        {"q": _match_expr(terms), "k": k, "owner": owner_id},
    )
    return [(int(r[0]), float(r[1])) for r in rows]


def fts_count(conn: Connection, table: str, unit_id: int) -> int:
    """How many rows of `table` a unit has (0 or 1; used to check deletes)."""
    return int(
        conn.execute(text(f"SELECT count(*) FROM {table} WHERE rowid = :id"), {"id": unit_id}).scalar() or 0
    )


def ensure_unicode61_baseline(conn: Connection) -> None:
    """(Re)build the unicode61 baseline table from the trigram table's text (tests and benchmark only)."""
    conn.execute(text(f"DROP TABLE IF EXISTS {FTS_UNICODE61}"))
    conn.execute(text(f"CREATE VIRTUAL TABLE {FTS_UNICODE61} USING fts5(body, tokenize='unicode61')"))
    conn.execute(text(f"INSERT INTO {FTS_UNICODE61}(rowid, body) SELECT rowid, body FROM {FTS_TRIGRAM}"))


def upgrade(conn: Connection) -> None:
    """Give every unit indexed before the lexical index its lexical keys (idempotent: only missing rows).

    The keys are computed from the trigram table's normalized text, which keys the same as the original."""
    if conn.dialect.name != "sqlite":
        return
    missing = conn.execute(
        text(f"SELECT rowid, body FROM {FTS_TRIGRAM} WHERE rowid NOT IN (SELECT rowid FROM {FTS_LEXICAL})")
    ).all()
    for unit_id, body in missing:
        conn.execute(
            text(f"INSERT INTO {FTS_LEXICAL}(rowid, body) VALUES (:id, :b)"),
            {"id": int(unit_id), "b": lexical_document(body)},
        )
