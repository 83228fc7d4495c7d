"""What of a manual chunk is embedded, and how a chunk's vectors score a query (spec 04 §10 RAGService).

A chunk is embedded whole (heading + text) and sentence by sentence (heading + one sentence): an owner's
everyday description usually matches one sentence of a section (「ハンドルが重い」 → the power-steering sentence)
better than the whole section, whose other sentences dilute its vector. A chunk's dense score is the best of
its vectors. Vector ids are the chunk id (the whole) and ``<chunk id>~s<n>`` (its sentences); every vector's
metadata names its chunk, so one Chroma query over the vehicle returns all of them and they are grouped here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from core.search.embedders import Embedder, Matrix

SENTENCE_SEPARATOR = "~s"
# The sample manuals' vectors of the bundled model, computed once and shipped (build_manual_vectors.py beside the
# manuals): indexing them is then a copy, not ~900 model runs (15-90 s on two cores) on the first diagnosis visit.
PRECOMPUTED = "manual_vectors-{key}.npz"
_SENTENCE_END = re.compile(r"(?<=[。！？])")


def chunk_vectors(chunk: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(vector id, text to embed) of a chunk: the whole chunk, then each sentence with the heading."""
    heading = str(chunk["section"])
    text = str(chunk["text"])
    out = [(str(chunk["id"]), f"{heading}：{text}")]
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    if len(sentences) > 1:
        out += [
            (f"{chunk['id']}{SENTENCE_SEPARATOR}{n}", f"{heading}：{sentence}")
            for n, sentence in enumerate(sentences, 1)
        ]
    return out


def chunk_of(vector_id: str) -> str:
    """The chunk id a vector id belongs to."""
    return vector_id.split(SENTENCE_SEPARATOR, 1)[0]


def best_per_chunk(vector_ids: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """The best score of each chunk among its vectors' scores, best chunk first."""
    best: dict[str, float] = {}
    for vector_id, score in zip(vector_ids, scores, strict=True):
        chunk = chunk_of(vector_id)
        if score > best.get(chunk, float("-inf")):
            best[chunk] = score
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))


def text_digest(text: str) -> str:
    """The key of a text's shipped vector."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@lru_cache(maxsize=4)
def precomputed(samples_dir: Path, embedder_key: str) -> dict[str, Matrix]:
    """The shipped vectors of `embedder_key` by text digest ({} when none were shipped for it)."""
    return precomputed_file(samples_dir / PRECOMPUTED.format(key=embedder_key))


def precomputed_file(path: Path) -> dict[str, Matrix]:
    """Shipped vectors by text digest, from an npz of `digests` and `vectors` ({} when there is no such file)."""
    if not path.is_file():
        return {}
    with np.load(path) as data:
        return dict(zip((str(d) for d in data["digests"]), data["vectors"].astype(np.float32), strict=True))


def embed_passages(embedder: Embedder, texts: Sequence[str], samples_dir: Path) -> Matrix:
    """Passage vectors of `texts`: shipped ones where the text is unchanged, the embedder's for the rest."""
    return shipped_or_embedded(
        texts, precomputed(samples_dir, embedder.key), embedder.embed_documents, embedder.dim
    )


def shipped_or_embedded(
    texts: Sequence[str], shipped: Mapping[str, Matrix], embed: Callable[[list[str]], Matrix], dim: int
) -> Matrix:
    """Vectors of `texts`: the shipped one where a text's digest has one, `embed`'s for the rest (one call)."""
    missing = [t for t in texts if text_digest(t) not in shipped]
    fresh = dict(zip(missing, embed(missing), strict=True)) if missing else {}
    rows = [shipped.get(text_digest(t), fresh.get(t)) for t in texts]
    return np.stack([r for r in rows if r is not None]) if rows else np.zeros((0, dim), np.float32)
