"""FTS5 tables of the companion memory: a trigram index, a 2-character index, and a unicode61 baseline.

Issue 5: FTS5 `unicode61` cannot find ordinary Japanese words inside a sentence, so the keyword lane
uses the `trigram` tokenizer (terms of 3+ characters) plus a bigram table (space-separated
2-character tokens under unicode61) for words such as 締切. The unicode61 table over the raw text
exists only as the comparison baseline (tests, benchmark). Row ids are unit ids; searches join
memory_units so that only one person's units are ever found (issue #14).
"""

from __future__ import annotations

from sqlalchemy import DDL, Connection, event, text

from core.store.db import metadata

FTS_TRIGRAM = "memory_fts_trigram"
FTS_BIGRAM = "memory_fts_bigram"
FTS_UNICODE61 = "memory_fts_unicode61"
FTS_TABLES = (FTS_TRIGRAM, FTS_BIGRAM)

_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TRIGRAM} USING fts5(body, tokenize='trigram')",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_BIGRAM} USING fts5(body, tokenize='unicode61')",
)
for _statement in _DDL:
    _create = DDL(_statement)  # type: ignore[no-untyped-call]  # SQLAlchemy's DDL.__init__ is unannotated
    event.listen(metadata, "after_create", _create.execute_if(dialect="sqlite"))


def fts_upsert(conn: Connection, unit_id: int, body: str, bigram_body: str) -> None:
    """Index (or re-index) one unit's search text."""
    fts_delete(conn, unit_id)
    conn.execute(text(f"INSERT INTO {FTS_TRIGRAM}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": body})
    conn.execute(
        text(f"INSERT INTO {FTS_BIGRAM}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": bigram_body}
    )


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
