"""Japanese word vectors (chiVe, Works Applications; Apache-2.0) as the ja-ginza package ships them (MIT).

Word vectors learned from a very large corpus know what the 4-bit e5-small sentence model does not: that 弦楽器
lies near ギター, リキュール near 梅酒, ニコチン near 禁煙, 鈍行 near 普通列車. The bundled embedder
(core.search.embedders) adds a text's word vector to its e5 vector, so a question asked in other words still
finds the memory, manual section or knowledge entry it is about.

The package's spaCy vector files are read here without spaCy (which is never imported):
- ``vocab/vectors``: a NumPy array, 20,000 rows × 300;
- ``vocab/key2row``: a msgpack map from a word's 64-bit hash (MurmurHash64A with seed 1, spaCy's
  ``hash_string``) to its row: 480,443 words, the rarer ones pointing at the row of a near, more frequent word.

Rows are in order of frequency, so a row's index says how common its word is. A text's vector is the sum of its
content words' unit vectors (core.text.japanese.word_forms: each looked up by its normalized form, dictionary
form or surface; a compound that is not in the list by its parts), each weighted by ``log(row + 10)`` so rare
words count for more than common ones, made unit length; a text with no known word gets the zero vector.
"""

from __future__ import annotations

import importlib.util
import struct
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from core.search.embedder_base import EmbeddingError
from core.text.japanese import word_forms

DIM = 300
PACKAGE = "ja_ginza"
# Time and discourse words that say nothing about what a text is about (「最近」「まだ」「もう」).
STOP_WORDS = frozenset({"今日", "最近", "その後", "まだ", "もう", "又", "ちゃんと"})
WEIGHT_OFFSET = 10.0  # weight of a word = log(row + WEIGHT_OFFSET)

_MASK = (1 << 64) - 1
_M = 0xC6A4A7935BD1E995


class WordVectorsMissing(EmbeddingError):
    """The word vector files are not installed (the ja-ginza package); the message is Japanese."""


def murmur64a(data: bytes, seed: int = 1) -> int:
    """MurmurHash64A of `data`: the hash spaCy keys its vectors by (``hash_string`` uses seed 1)."""
    h = (seed ^ (len(data) * _M)) & _MASK
    whole = len(data) // 8
    for (k,) in struct.iter_unpack("<Q", data[: whole * 8]):
        k = (k * _M) & _MASK
        k ^= k >> 47
        k = (k * _M) & _MASK
        h ^= k
        h = (h * _M) & _MASK
    tail = data[whole * 8 :]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * _M) & _MASK
    h ^= h >> 47
    h = (h * _M) & _MASK
    h ^= h >> 47
    return h


def _uint(buf: bytes, i: int) -> tuple[int, int]:
    """A msgpack unsigned integer at `i`: (value, next offset)."""
    t = buf[i]
    if t < 0x80:
        return t, i + 1
    if t == 0xCC:
        return buf[i + 1], i + 2
    if t == 0xCD:
        return struct.unpack_from(">H", buf, i + 1)[0], i + 3
    if t == 0xCE:
        return struct.unpack_from(">I", buf, i + 1)[0], i + 5
    if t == 0xCF:
        return struct.unpack_from(">Q", buf, i + 1)[0], i + 9
    raise ValueError(f"unexpected msgpack type 0x{t:02x} at {i}")


def read_key2row(path: Path) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """spaCy's ``key2row`` file (a msgpack map of unsigned integers) as sorted keys and their rows."""
    buf = path.read_bytes()
    if buf[0] == 0xDF:
        n, i = struct.unpack_from(">I", buf, 1)[0], 5
    elif buf[0] == 0xDE:
        n, i = struct.unpack_from(">H", buf, 1)[0], 3
    else:
        raise ValueError("key2row is not a msgpack map")
    keys = np.empty(n, np.uint64)
    rows = np.empty(n, np.int32)
    for j in range(n):
        keys[j], i = _uint(buf, i)
        rows[j], i = _uint(buf, i)
    order = np.argsort(keys)
    return keys[order], rows[order]


def vocab_dir() -> Path:
    """Where the installed ja-ginza package keeps its vectors (``ja_ginza/ja_ginza-<version>/vocab``)."""
    spec = importlib.util.find_spec(PACKAGE)  # finds the package without running it (it would import spaCy)
    if spec is None or not spec.submodule_search_locations:
        raise WordVectorsMissing(
            "語ベクトル（ja-ginza パッケージ）がインストールされていません。`pip install -e .` で入れ直してください。"
        )
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob(f"{PACKAGE}-*/vocab"))
    if not found:
        raise WordVectorsMissing("ja-ginza パッケージに語ベクトルのファイルが見つかりません。")
    return found[-1]


class WordVectors:
    """The vectors and the word -> row index, loaded once (about 0.4 s and 30 MB)."""

    def __init__(self, vocab: Path) -> None:
        vectors = np.asarray(np.load(vocab / "vectors"), dtype=np.float32)  # float32 already: no copy
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)  # in place (24 MB)
        self.vectors: npt.NDArray[np.float32] = vectors
        self.keys, self.rows = read_key2row(vocab / "key2row")
        self.weights = np.log(np.arange(len(vectors), dtype=np.float32) + WEIGHT_OFFSET)

    def row(self, word: str) -> int | None:
        """The vector row of `word`, or None when the list does not know it."""
        key = np.uint64(murmur64a(word.encode("utf-8")))
        at = int(np.searchsorted(self.keys, key))
        return int(self.rows[at]) if at < len(self.keys) and self.keys[at] == key else None

    def _first(self, forms: Sequence[str]) -> int | None:
        if any(f in STOP_WORDS for f in forms):
            return None
        return next((r for r in (self.row(f) for f in forms) if r is not None), None)

    def text_rows(self, text: str) -> list[int]:
        """The rows of a text's content words, each once, in order of first appearance."""
        found: dict[int, None] = {}
        for forms, parts in word_forms(text):
            row = self._first(forms)
            if row is not None:
                found.setdefault(row, None)
                continue
            for part in parts:
                part_row = self._first(part)
                if part_row is not None:
                    found.setdefault(part_row, None)
        return list(found)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length 300-dimension row per text (the zero row for a text with no known word)."""
        out = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):
            rows = self.text_rows(text)
            if rows:
                v = (self.weights[rows, None] * self.vectors[rows]).sum(axis=0)
                out[i] = v / max(float(np.linalg.norm(v)), 1e-9)
        return out


_lock = threading.Lock()
_loaded: list[WordVectors] = []


def word_vectors() -> WordVectors:
    """The process's one copy of the word vectors, loaded on first use."""
    with _lock:
        if not _loaded:
            _loaded.append(WordVectors(vocab_dir()))
        return _loaded[0]
