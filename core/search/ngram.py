"""Signed hashed character 2-/3-grams: an embedding with no model (the fallback embedder, and tests).

Deterministic across processes and platforms (SplitMix64, not Python's salted ``hash``), needs no download and
suits Japanese (no tokenizer). It matches spellings, not meaning.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import numpy.typing as npt

DEFAULT_DIM = 512

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TAG_SHORT = np.uint64(1 << 63)  # marks 1-/2-gram keys so they never equal a 3-gram key


def _mix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64 finalizer on uint64 arrays: a fixed bijection that spreads every input bit.

    Pure integer arithmetic (wrapping mod 2**64), so the result is the same in every process and
    on every platform, unlike Python's salted ``hash``.
    """
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _ngram_keys(text: str) -> npt.NDArray[np.uint64]:
    """Pack each character 2-gram and 3-gram of ``text`` into one distinct uint64 key.

    Code points fit in 21 bits, so a 3-gram packs exactly into 63 bits and a 2-gram into 42 bits
    plus a tag bit: different n-grams always get different keys (no collisions before bucketing).
    A 1-character text is its own feature; an empty text has none.
    """
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    if len(cps) < 2:
        return cps | _TAG_SHORT
    bigrams = (cps[:-1] << np.uint64(21)) | cps[1:] | _TAG_SHORT
    trigrams = (cps[:-2] << np.uint64(42)) | (cps[1:-1] << np.uint64(21)) | cps[2:]
    return np.concatenate([bigrams, trigrams])


def normalize_text(text: str) -> str:
    """NFKC-normalize, lowercase and drop all whitespace (so ``"ＡＢＳ"`` and ``"a b s"`` equal ``"abs"``)."""
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def embed_text(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """Embed one text as a unit-length float32 vector of length ``dim``.

    Each n-gram adds ±1 to its hashed bucket (a sign bit from the same stable 64-bit hash, so
    colliding n-grams tend to cancel rather than pile up; see :func:`_mix64`), then
    the vector is L2-normalized. Text with no features (empty or whitespace only) gets the fixed
    unit vector ``e_0`` instead of a zero vector, whose cosine distance is undefined; all such texts
    are therefore identical to each other and roughly orthogonal to real text.
    """
    hashes = _mix64(_ngram_keys(normalize_text(text)))
    vec: np.ndarray = np.zeros(dim, dtype=np.float64)
    if hashes.size:
        buckets = ((hashes & np.uint64(0x7FFF_FFFF_FFFF_FFFF)) % np.uint64(dim)).astype(np.intp)
        signs = np.where(hashes >> np.uint64(63), -1.0, 1.0)
        vec = np.bincount(buckets, weights=signs, minlength=dim)
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:  # no features, or (very unlikely) every feature cancelled out
        vec = np.zeros(dim, dtype=np.float64)
        vec[0] = 1.0
        norm = 1.0
    return (vec / norm).astype(np.float32)
