"""The memory keyword lanes on PostgreSQL: one row of text per (lane, unit), ranked like FTS5.

`memory_lex_docs` (migration v0004) holds, per lane, the document as FTS5 would tokenize it: the trigram
lane keeps the normalized text (a phrase matches where it occurs as a substring, as with FTS5's trigram
tokenizer); the token lanes (2-character, Sudachi lexical keys, unicode61 baseline) keep unicode61 tokens
between spaces, so a phrase is ` tok1 tok2 ` inside the text (the lexical lane keeps diacritics, like its
FTS5 table's `remove_diacritics 0`). As on SQLite, the statistics are the whole lane's and only the units
of the person asking (memory_units.owner_id) are returned. Matching uses LIKE (served by a pg_trgm GIN index when the
extension is available), occurrences are counted with an overlapping `regexp_count`, and the score is
core.store.lexical.fts5_bm25: the same units, scores and order as SQLite's FTS5.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    String,
    Text,
    func,
    literal,
    select,
    union_all,
)
from sqlalchemy import (
    delete as sql_delete,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.sql.schema import Table

from core.store.lexical import (
    best,
    fts5_bm25,
    like_pattern,
    trigram_token_count,
    unicode61_tokens,
)
from core.store.memory.lanes_sqlite import (
    FTS_BIGRAM,
    FTS_LEXICAL,
    FTS_TABLES,
    FTS_TRIGRAM,
    FTS_UNICODE61,
)
from core.store.memory.tables import units

LANES = {FTS_TRIGRAM: "trigram", FTS_BIGRAM: "bigram", FTS_LEXICAL: "lexical", FTS_UNICODE61: "unicode61"}
TOKEN_LANES = frozenset({"bigram", "lexical", "unicode61"})
KEEP_DIACRITICS = frozenset({"lexical"})
_ARE_SPECIAL = set("\\^$.|?*+()[]{}")

# Declared apart from the shared metadata: only PostgreSQL has this table (SQLite has FTS5 tables instead).
docs = Table(
    "memory_lex_docs",
    MetaData(),
    Column("lane", String(16), primary_key=True),
    Column("unit_id", Integer, primary_key=True),
    Column("body", Text, nullable=False),
    Column("n_tokens", Integer, nullable=False),
)


def token_document(text: str, *, remove_diacritics: bool = True) -> tuple[str, int]:
    """A token lane's stored text (` tok1 tok2 ... `) and its length in tokens."""
    tokens = unicode61_tokens(text, remove_diacritics=remove_diacritics)
    return " " + " ".join(tokens) + " ", len(tokens)


def _document(lane: str, text: str) -> tuple[str, int]:
    if lane in TOKEN_LANES:
        return token_document(text, remove_diacritics=lane not in KEEP_DIACRITICS)
    return text, trigram_token_count(text)


def phrase(lane: str, term: str) -> str | None:
    """What a query term must match in the lane's text (None: FTS5 would match nothing with it)."""
    if lane in TOKEN_LANES:
        tokens = unicode61_tokens(term, remove_diacritics=lane not in KEEP_DIACRITICS)
        return " " + " ".join(tokens) + " " if tokens else None
    return term if len(term) >= 3 else None


def _lookahead(needle: str) -> str:
    """An ARE pattern matching at every position where `needle` starts (so overlaps are counted)."""
    return "(?=" + "".join("\\" + c if c in _ARE_SPECIAL else c for c in needle) + ")"


def _write(conn: Connection, lane: str, unit_id: int, text: str) -> None:
    body, n_tokens = _document(lane, text)
    statement = insert(docs).values(lane=lane, unit_id=unit_id, body=body, n_tokens=n_tokens)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=[docs.c.lane, docs.c.unit_id], set_={"body": body, "n_tokens": n_tokens}
        )
    )


def upsert(conn: Connection, unit_id: int, body: str, bigram_body: str, lexical_body: str) -> None:
    _write(conn, "trigram", unit_id, body)
    _write(conn, "bigram", unit_id, bigram_body)
    _write(conn, "lexical", unit_id, lexical_body)


def delete(conn: Connection, unit_id: int) -> None:
    lanes = [LANES[t] for t in FTS_TABLES]
    conn.execute(sql_delete(docs).where(docs.c.unit_id == unit_id, docs.c.lane.in_(lanes)))


def bodies(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    rows = conn.execute(
        select(docs.c.unit_id, docs.c.body).where(docs.c.lane == "trigram", docs.c.unit_id.in_(unit_ids))
    )
    return {int(r[0]): str(r[1]) for r in rows}


def search(conn: Connection, table: str, terms: list[str], k: int, owner_id: str) -> list[tuple[int, float]]:
    lane = LANES[table]
    phrases = [phrase(lane, term) for term in terms]
    # One round trip: row -1 carries the lane's statistics (rows, tokens); then, per phrase, the person's hits,
    # each with how many rows of the whole lane contain the phrase (its IDF, as FTS5 counts it: every
    # person's rows), from one scan of the phrase's matches.
    stats = select(
        literal(-1).label("i"),
        func.count().label("unit_id"),
        func.coalesce(func.sum(docs.c.n_tokens), 0).label("n_tokens"),
        literal(0).label("freq"),
        literal(0).label("df"),
    ).where(docs.c.lane == lane)
    parts = []
    for i, needle in enumerate(phrases):
        if needle is None:
            continue
        matches = (
            select(
                docs.c.unit_id,
                docs.c.n_tokens,
                docs.c.body,
                func.count().over().label("df"),
                units.c.owner_id,
            )
            .select_from(docs.outerjoin(units, units.c.id == docs.c.unit_id))
            .where(docs.c.lane == lane, docs.c.body.like(like_pattern(needle), escape="\\"))
            .subquery()
        )
        parts.append(
            select(
                literal(i),
                matches.c.unit_id,
                matches.c.n_tokens,
                func.regexp_count(matches.c.body, _lookahead(needle)),
                matches.c.df,
            ).where(matches.c.owner_id == owner_id)
        )
    if not parts:
        return []
    hits: list[dict[int, int]] = [{} for _ in phrases]
    doc_freq = [0 for _ in phrases]
    lengths: dict[int, int] = {}
    n_rows = n_tokens_total = 0
    for i, unit_id, n_tokens, freq, df in conn.execute(union_all(stats, *parts)):
        if int(i) < 0:
            n_rows, n_tokens_total = int(unit_id), int(n_tokens)
            continue
        hits[int(i)][int(unit_id)] = int(freq)
        doc_freq[int(i)] = int(df)  # a phrase none of the person's rows contain scores nothing: 0 is fine
        lengths[int(unit_id)] = int(n_tokens)
    if not lengths:
        return []
    return best(fts5_bm25(hits, lengths, n_rows, n_tokens_total, doc_freq), k)


def count(conn: Connection, table: str, unit_id: int) -> int:
    query = select(func.count()).where(docs.c.lane == LANES[table], docs.c.unit_id == unit_id)
    return int(conn.execute(query).scalar() or 0)


def lexical_missing(conn: Connection) -> list[tuple[int, str]]:
    """(unit id, normalized text) of units in the trigram lane without a lexical row."""
    lexical = select(docs.c.unit_id).where(docs.c.lane == "lexical")
    rows = conn.execute(
        select(docs.c.unit_id, docs.c.body).where(docs.c.lane == "trigram", docs.c.unit_id.not_in(lexical))
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def write_lexical(conn: Connection, unit_id: int, lexical_body: str) -> None:
    _write(conn, "lexical", unit_id, lexical_body)


def ensure_unicode61_baseline(conn: Connection) -> None:
    conn.execute(sql_delete(docs).where(docs.c.lane == "unicode61"))
    rows = conn.execute(select(docs.c.unit_id, docs.c.body).where(docs.c.lane == "trigram")).all()
    values = []
    for unit_id, text in rows:
        body, n_tokens = token_document(text)
        values.append({"lane": "unicode61", "unit_id": unit_id, "body": body, "n_tokens": n_tokens})
    if values:
        conn.execute(docs.insert(), values)
