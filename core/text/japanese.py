"""Lexical keys of Japanese text with SudachiPy: the ONE key function of every lexical index.

A key is what two spellings of one word share, so hiragana / kanji / okurigana / katakana-loanword variants
meet: ねこ and 猫 (normalized form 猫, reading ネコ), 締め切り / 締切 (締め切り), 打合せ / 打ち合わせ,
パソコン / PC and スマホ / スマートフォン (Sudachi's synonym group, key `syn14881`), ＮＤＡ / NDA (folded).
Particles, auxiliaries, symbols, prefixes and suffixes (さん, 様, くん, ちゃん) and light verbs (する, なる, いる)
give no key. Every key is folded (core.text.textnorm.fold) and kana keys are katakana.

`lexical_keys(text)` is the list; `lexical_document(text)` the same keys joined by spaces, which SQLite FTS5
(`unicode61`) and PostgreSQL (`to_tsvector('simple', ...)`) both index as is; `term_keys` gives the keys of
each search term apart, for AND search. The dictionary (sudachidict-core) ships on PyPI: nothing is
downloaded at run time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sudachipy import Dictionary, SplitMode

from core.text.textnorm import fold

# Parts of speech (Sudachi's first level) that carry content; the rest (助詞, 助動詞, 補助記号, 空白, 接頭辞,
# 接尾辞, 代名詞, 連体詞, 接続詞, 感動詞, 記号) give no key.
CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞", "副詞"})
# Words that do not conjugate: their surface is a key too (鮨 beside its normalized form 寿司).
SURFACE_POS = frozenset({"名詞", "形状詞", "副詞"})
# Proper nouns give their reading as a key too, so a name written in kana meets the kanji (たなか / 田中);
# common nouns need not (Sudachi normalizes ねこ to 猫) and their readings would join homophones.
READING_POS = ("名詞", "固有名詞")
# Too common to tell memories apart (normalized forms).
STOP_KEYS = frozenset(
    {
        "こと",
        "もの",
        "物",
        "事",
        "ところ",
        "所",
        "ため",
        "為",
        "よう",
        "様",
        "とき",
        "時",
        "方",
        "感じ",
        "自分",
    }
)
SYNONYM_PREFIX = "syn"
# Sudachi refuses inputs over ~49 KB; longer text is keyed in pieces cut at line or sentence ends.
CHUNK_CHARS = 8000
_SPLIT = re.compile(r"(?<=[\n。！？!?])")
_HIRAGANA = re.compile(r"[\u3041-\u3096]")
_KANA_ONLY = re.compile(r"^[\u3041-\u3096\u30a1-\u30fa\u30fcー]+$")
# Honorifics and familiar suffixes stripped from a name before it is matched (spec 03: entity aliases).
HONORIFICS = ("さん", "様", "さま", "くん", "君", "ちゃん", "氏", "殿", "先生", "先輩")
_TERM_SPLIT = re.compile(r"[\s、，,・/／]+")


@lru_cache(maxsize=1)
def _dictionary() -> Any:
    return Dictionary(dict="core")


_local = threading.local()


def _tokenizer() -> Any:
    """One tokenizer per thread (a Sudachi tokenizer is not meant to be shared between threads)."""
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        dictionary = _dictionary()
        # SudachiPy 0.6 names it create(); 0.7 added tokenizer() (ja-ginza keeps the install on 0.6)
        make = getattr(dictionary, "tokenizer", None) or dictionary.create
        tok = make(mode=SplitMode.C)
        _local.tokenizer = tok
    return tok


def to_katakana(text: str) -> str:
    """Hiragana -> katakana (the one kana of keys)."""
    return _HIRAGANA.sub(lambda m: chr(ord(m.group()) + 0x60), text)


def _chunks(text: str) -> Iterable[str]:
    if len(text) <= CHUNK_CHARS:
        yield text
        return
    piece = ""
    for part in _SPLIT.split(text):
        while len(part) > CHUNK_CHARS:
            yield part[:CHUNK_CHARS]
            part = part[CHUNK_CHARS:]
        if len(piece) + len(part) > CHUNK_CHARS:
            yield piece
            piece = ""
        piece += part
    if piece:
        yield piece


def _key(form: str) -> str:
    key = fold(form).strip()
    return to_katakana(key) if _KANA_ONLY.match(key) else key


def _usable(key: str) -> bool:
    if not key or key in STOP_KEYS or key.isspace():
        return False
    # A lone kana or latin letter is noise; a lone kanji (猫) or digit (8) is a word.
    return len(key) > 1 or not (_KANA_ONLY.match(key) or (key.isascii() and key.isalpha()))


def _is_content(m: Any) -> bool:
    pos = m.part_of_speech()
    return pos[0] in CONTENT_POS and not (pos[0] in ("動詞", "形容詞") and pos[1] == "非自立可能")


def _word_keys(m: Any) -> list[str]:
    """The keys that stand for one word: normalized form, surface, reading (proper nouns), synonym groups."""
    pos = m.part_of_speech()
    keys = [_key(m.normalized_form())]
    if pos[0] in SURFACE_POS:
        keys.append(_key(m.surface()))
    if pos[:2] == READING_POS and len(m.reading_form()) >= 2:
        keys.append(_key(m.reading_form()))
    keys += [f"{SYNONYM_PREFIX}{gid}" for gid in m.synonym_group_ids()]
    return [k for k in dict.fromkeys(keys) if _usable(k)]


def _part_keys(m: Any) -> list[str]:
    """The keys of a compound's short- and middle-unit parts (締切日 -> 締め切り, 締切, syn16643, 日;
    振込手数料 -> 振り込み, 手数料, ...)."""
    parts = [p for mode in (SplitMode.A, SplitMode.B) for p in m.split(mode)]
    if len(parts) < 2:
        return []
    return [k for p in parts if _is_content(p) for k in _word_keys(p)]


def _content_morphemes(text: str) -> Iterable[Any]:
    tok = _tokenizer()
    for chunk in _chunks(text or ""):
        if chunk.strip():
            yield from (m for m in tok.tokenize(chunk) if _is_content(m))


def word_forms(text: str) -> list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]]:
    """Each content word of `text` as the forms a word list may know it by (normalized form, dictionary form,
    surface; 締め切り / 締切る / 締切っ) and, for a compound, the same forms of its short-unit parts, in order.
    Words whose normalized form is a STOP_KEYS entry give nothing. What core.search.word_vectors looks up."""
    out: list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = []
    for m in _content_morphemes(text):
        if m.normalized_form() in STOP_KEYS:
            continue
        forms = tuple(dict.fromkeys((m.normalized_form(), m.dictionary_form(), m.surface())))
        parts = m.split(SplitMode.A)
        part_forms = tuple(
            tuple(dict.fromkeys((p.normalized_form(), p.dictionary_form(), p.surface())))
            for p in parts
            if len(parts) > 1 and _is_content(p) and p.normalized_form() not in STOP_KEYS
        )
        out.append((forms, part_forms))
    return out


def lexical_keys(text: str) -> list[str]:
    """The lexical keys of a text (words and the parts of compounds), in order of first appearance, each once."""
    keys: dict[str, None] = {}
    for m in _content_morphemes(text):
        for key in (*_word_keys(m), *_part_keys(m)):
            keys.setdefault(key, None)
    return list(keys)


def key_groups(text: str) -> list[list[str]]:
    """One group of keys per content word of `text` (any key of a group stands for that word): what an AND
    search requires of a document, word by word (秘密保持 -> [[秘密, syn17676], [保持, syn16005]])."""
    return [keys for keys in (_word_keys(m) for m in _content_morphemes(text)) if keys]


def lexical_document(text: str) -> str:
    """lexical_keys joined by single spaces: the indexed text of a lexical index (SQLite or PostgreSQL)."""
    return " ".join(lexical_keys(text))


def split_terms(query: str) -> list[str]:
    """Search terms of a query: split at spaces (full-width too), 、，, ・ and /; empty ones dropped."""
    return [t for t in _TERM_SPLIT.split(fold(query)) if t]


def term_keys(query: str) -> list[tuple[str, list[list[str]]]]:
    """(folded term, its key groups) for each term of a query: several terms are ANDed by the caller."""
    return [(term, key_groups(term)) for term in split_terms(query)]


def strip_honorific(name: str) -> str:
    """田中さん -> 田中, 美咲ちゃん -> 美咲; a name that is only an honorific is kept."""
    stripped = name.strip()
    for suffix in HONORIFICS:
        if stripped.endswith(suffix) and len(stripped) > len(suffix):
            return stripped[: -len(suffix)].strip()
    return stripped


def name_key(name: str) -> str:
    """The matching key of an entity name or alias: folded, honorific stripped, hiragana as katakana."""
    return to_katakana(strip_honorific(fold(name)))
