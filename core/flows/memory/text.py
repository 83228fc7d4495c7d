"""Text helpers shared by indexing and retrieval: normalization, character 3-grams, Dice, query terms."""

from __future__ import annotations

import re

from core.text.textnorm import fold

# Runs of kanji, katakana (with the long-vowel mark) or latin letters/digits: the parts of a Japanese
# sentence that carry its content words. Hiragana runs are mostly particles and endings.
_RUN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf々〆]+|[\u30a0-\u30ffー]+|[a-z0-9]+")
# Common 2-character words too generic to search for.
STOP_TERMS = frozenset(
    [
        "今日",
        "明日",
        "昨日",
        "最近",
        "本当",
        "自分",
        "感じ",
        "時間",
        "前回",
        "今度",
        "話題",
        "一緒",
        "大丈夫",
        "何か",
        "全部",
        "場合",
        "意味",
        "気持",
        "今回",
        "以前",
    ]
)


def normalize(text: str) -> str:
    """core.text.textnorm.fold: radicals repaired, NFKC, lower case (full-width letters and digits become ASCII)."""
    return fold(text)


def char_trigrams(text: str) -> set[str]:
    """The set of character 3-grams of the whitespace-free normalized text."""
    s = "".join(normalize(text).split())
    return {s[i : i + 3] for i in range(len(s) - 2)}


def dice(a: set[str], b: set[str]) -> float:
    """Dice coefficient 2|A∩B| / (|A|+|B|); 0 when both are empty."""
    if not a and not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def content_runs(text: str) -> list[str]:
    """Kanji, katakana and latin/digit runs of the normalized text, in order."""
    return _RUN.findall(normalize(text))


def query_terms(text: str) -> tuple[list[str], list[str]]:
    """Search terms of a query: (terms of 3+ characters for the trigram index, 2-character terms).

    Kanji runs of 3-4 characters also give their 2-character parts (締切日 -> 締切, 切日), so a
    compound in the query still finds the shorter word in a memory.
    """
    long_terms: list[str] = []
    short_terms: list[str] = []
    for run in content_runs(text):
        if len(run) >= 3:
            if run not in long_terms:
                long_terms.append(run)
            if 3 <= len(run) <= 4 and _is_kanji(run):
                for i in range(len(run) - 1):
                    _add_short(short_terms, run[i : i + 2])
        elif len(run) == 2:
            _add_short(short_terms, run)
    return long_terms, short_terms


def bigram_document(text: str) -> str:
    """The 2-character tokens of a memory's content runs, space separated (the bigram index's text)."""
    grams: list[str] = []
    seen: set[str] = set()
    for run in content_runs(text):
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if gram not in seen:
                seen.add(gram)
                grams.append(gram)
    return " ".join(grams)


def _add_short(terms: list[str], term: str) -> None:
    if term not in STOP_TERMS and term not in terms:
        terms.append(term)


def _is_kanji(run: str) -> bool:
    return all("\u4e00" <= c <= "\u9fff" or c in "々〆" for c in run)
