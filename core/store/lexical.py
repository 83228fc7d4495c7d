"""Japanese lexical search on any engine: LIKE patterns, and FTS5's tokenizers and BM25 in Python.

Search behaves the same on SQLite and PostgreSQL because both engines consume the same keys, computed in
Python, never by the database: core.text.textnorm.fold and core.text.japanese (lexical_document, key_groups) for the
knowledge base (core/store/knowledge/search.py); the memory flow passes its normalized text, 2-character
document, Sudachi lexical document and query terms in (core/flows/memory/text.py). On SQLite the
memory lanes are FTS5 tables; on PostgreSQL (core/store/memory/lanes_pg.py) the same documents are stored as
text and ranked with `fts5_bm25` below, which is FTS5's `bm25()` (k1 = 1.2, b = 0.75, IDF floored at 1e-6,
phrase frequency, document length in tokens), so both engines return the same units in the same order.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence

K1 = 1.2  # FTS5 bm25() constants (sqlite ext/fts5/fts5_aux.c)
B = 0.75
MIN_IDF = 1e-6
_LATIN_DIACRITICS = range(0x00C0, 0x0250)  # remove_diacritics=1 folds these (é -> e) in unicode61


def like_pattern(term: str) -> str:
    """`%term%` for `LIKE ... ESCAPE '\\'`, with the term's own % _ \\ taken literally."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fold(char: str, remove_diacritics: bool) -> str:
    char = char.lower()
    if remove_diacritics and len(char) == 1 and ord(char) in _LATIN_DIACRITICS:
        base = unicodedata.normalize("NFD", char)
        if len(base) == 2 and unicodedata.category(base[1]) == "Mn":
            return base[0]
    return char


def _is_token_char(char: str) -> bool:
    """unicode61's default token characters ("categories L* N* Co"); everything else separates tokens."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


def unicode61_tokens(text: str, *, remove_diacritics: bool = True) -> list[str]:
    """Tokens as FTS5's `unicode61` tokenizer makes them: runs of letters, numbers and private-use characters,
    lower case, Latin diacritics removed (kept with `remove_diacritics=False`: `remove_diacritics 0`)."""
    tokens: list[str] = []
    current: list[str] = []
    for char in text:
        if _is_token_char(char):
            current.append(_fold(char, remove_diacritics))
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def trigram_token_count(text: str) -> int:
    """How many tokens FTS5's `trigram` tokenizer makes of a text: one per 3-character window."""
    return max(0, len(text) - 2)


def count_overlapping(text: str, needle: str) -> int:
    """Occurrences of `needle` in `text`, overlapping ones too (FTS5 counts every phrase position)."""
    count, start = 0, text.find(needle)
    while needle and start >= 0:
        count += 1
        start = text.find(needle, start + 1)
    return count


def fts5_bm25(
    phrase_hits: Sequence[Mapping[int, int]],
    doc_tokens: Mapping[int, int],
    n_rows: int,
    n_tokens: int,
    doc_freq: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """(row id, score) as FTS5's bm25() gives them for an OR of phrases: negative, lower is better.

    `phrase_hits[i]` maps each row containing phrase i to its number of occurrences; `doc_tokens` is each
    row's length in tokens; `n_rows` / `n_tokens` are the table's row count and total tokens; `doc_freq[i]`
    is how many rows of the table contain phrase i (default: len(phrase_hits[i]); given when the hits are
    only one person's rows, FTS5's IDF being the whole table's). The
    arithmetic follows FTS5's order of operations, so scores are equal to the last bit.
    """
    if n_rows <= 0:
        return []
    avgdl = float(n_tokens) / float(n_rows)
    idf = []
    for i, hits in enumerate(phrase_hits):
        n_hit = len(hits) if doc_freq is None else doc_freq[i]
        value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
        idf.append(value if value > 0.0 else MIN_IDF)
    scored = []
    for row_id in sorted({r for hits in phrase_hits for r in hits}):
        d = float(doc_tokens[row_id])
        score = 0.0
        for i, hits in enumerate(phrase_hits):
            freq = float(hits.get(row_id, 0))
            score += idf[i] * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * d / avgdl)))
        scored.append((row_id, -1.0 * score))
    return scored


def best(scored: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """The `k` best (lowest) scores, ties by row id: the order both engines return."""
    return sorted(scored, key=lambda hit: (hit[1], hit[0]))[:k]
