"""The memory keyword lanes on SQLite: FTS5 tables (trigram; unicode61 over 2-character tokens; a unicode61
baseline over the raw text for comparison). Row ids are unit ids. Called through core/store/memory_fts.py."""

from __future__ import annotations

from sqlalchemy import Connection, text

FTS_TRIGRAM = "memory_fts_trigram"
FTS_BIGRAM = "memory_fts_bigram"
FTS_UNICODE61 = "memory_fts_unicode61"
FTS_TABLES = (FTS_TRIGRAM, FTS_BIGRAM)


def upsert(conn: Connection, unit_id: int, body: str, bigram_body: str) -> None:
    delete(conn, unit_id)
    conn.execute(text(f"INSERT INTO {FTS_TRIGRAM}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": body})
    conn.execute(
        text(f"INSERT INTO {FTS_BIGRAM}(rowid, body) VALUES (:id, :b)"), {"id": unit_id, "b": bigram_body}
    )


def delete(conn: Connection, unit_id: int) -> None:
    for table in FTS_TABLES:
        conn.execute(text(f"DELETE FROM {table} WHERE rowid = :id"), {"id": unit_id})


def bodies(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    marks = ",".join(str(int(i)) for i in unit_ids)
    rows = conn.execute(text(f"SELECT rowid, body FROM {FTS_TRIGRAM} WHERE rowid IN ({marks})"))
    return {int(r[0]): r[1] for r in rows}


def _match_expr(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def search(conn: Connection, table: str, terms: list[str], k: int) -> list[tuple[int, float]]:
    rows = conn.execute(
        text(
            f"SELECT rowid, bm25({table}) AS s FROM {table} WHERE {table} MATCH :q ORDER BY s, rowid LIMIT :k"
        ),
        {"q": _match_expr(terms), "k": k},
    )
    return [(int(r[0]), float(r[1])) for r in rows]


def count(conn: Connection, table: str, unit_id: int) -> int:
    return int(
        conn.execute(text(f"SELECT count(*) FROM {table} WHERE rowid = :id"), {"id": unit_id}).scalar() or 0
    )


def ensure_unicode61_baseline(conn: Connection) -> None:
    conn.execute(text(f"DROP TABLE IF EXISTS {FTS_UNICODE61}"))
    conn.execute(text(f"CREATE VIRTUAL TABLE {FTS_UNICODE61} USING fts5(body, tokenize='unicode61')"))
    conn.execute(text(f"INSERT INTO {FTS_UNICODE61}(rowid, body) SELECT rowid, body FROM {FTS_TRIGRAM}"))
