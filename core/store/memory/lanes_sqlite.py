"""The memory keyword lanes on SQLite: FTS5 tables (trigram; unicode61 over 2-character tokens; unicode61 over
the Sudachi lexical keys, diacritics kept; a unicode61 baseline over the raw text for comparison). Row ids are
unit ids; every search joins memory_units so that only one person's units are found. The tables are created
by migrations (v0001, v0005). Called through core/store/memory/keyword_lanes.py."""

from __future__ import annotations

from sqlalchemy import Connection, text

FTS_TRIGRAM = "memory_fts_trigram"
FTS_BIGRAM = "memory_fts_bigram"
FTS_LEXICAL = "memory_fts_lexical"
FTS_UNICODE61 = "memory_fts_unicode61"
FTS_TABLES = (FTS_TRIGRAM, FTS_BIGRAM, FTS_LEXICAL)


def upsert(conn: Connection, unit_id: int, body: str, bigram_body: str, lexical_body: str) -> None:
    delete(conn, unit_id)
    for table, value in ((FTS_TRIGRAM, body), (FTS_BIGRAM, bigram_body), (FTS_LEXICAL, lexical_body)):
        conn.execute(text(f"INSERT INTO {table}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": value})


def delete(conn: Connection, unit_id: int) -> None:
    for table in FTS_TABLES:
        conn.execute(text(f"DELETE FROM {table} WHERE rowid = :id"), {"id": unit_id})


def bodies(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    marks = ",".join(str(int(i)) for i in unit_ids)
    rows = conn.execute(text(f"SELECT rowid, body FROM {FTS_TRIGRAM} WHERE rowid IN ({marks})"))
    return {int(r[0]): r[1] for r in rows}


def _match_expr(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def search(conn: Connection, table: str, terms: list[str], k: int, owner_id: str) -> list[tuple[int, float]]:
    rows = conn.execute(
        text(
            f"SELECT {table}.rowid, bm25({table}) AS s FROM {table} "
            f"JOIN memory_units ON memory_units.id = {table}.rowid "
            f"WHERE {table} MATCH :q AND memory_units.owner_id = :owner ORDER BY s, {table}.rowid LIMIT :k"
        ),
        {"q": _match_expr(terms), "k": k, "owner": owner_id},
    )
    return [(int(r[0]), float(r[1])) for r in rows]


def count(conn: Connection, table: str, unit_id: int) -> int:
    return int(
        conn.execute(text(f"SELECT count(*) FROM {table} WHERE rowid = :id"), {"id": unit_id}).scalar() or 0
    )


def lexical_missing(conn: Connection) -> list[tuple[int, str]]:
    """(unit id, normalized text) of units in the trigram lane without a lexical row."""
    rows = conn.execute(
        text(f"SELECT rowid, body FROM {FTS_TRIGRAM} WHERE rowid NOT IN (SELECT rowid FROM {FTS_LEXICAL})")
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def write_lexical(conn: Connection, unit_id: int, lexical_body: str) -> None:
    conn.execute(
        text(f"INSERT INTO {FTS_LEXICAL}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": lexical_body}
    )


def ensure_unicode61_baseline(conn: Connection) -> None:
    conn.execute(text(f"DROP TABLE IF EXISTS {FTS_UNICODE61}"))
    conn.execute(text(f"CREATE VIRTUAL TABLE {FTS_UNICODE61} USING fts5(body, tokenize='unicode61')"))
    conn.execute(text(f"INSERT INTO {FTS_UNICODE61}(rowid, body) SELECT rowid, body FROM {FTS_TRIGRAM}"))
