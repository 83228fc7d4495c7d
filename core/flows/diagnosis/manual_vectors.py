"""What of a manual chunk is embedded, and how a chunk's vectors score a query (spec 04 §10 RAGService).

A chunk is embedded whole (heading + text) and sentence by sentence (heading + one sentence): an owner's
everyday description usually matches one sentence of a section (「ハンドルが重い」 → the power-steering sentence)
better than the whole section, whose other sentences dilute its vector. A chunk's dense score is the best of
its vectors. Vector ids are the chunk id (the whole) and ``<chunk id>~s<n>`` (its sentences); every vector's
metadata names its chunk, so one Chroma query over the vehicle returns all of them and they are grouped here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

SENTENCE_SEPARATOR = "~s"
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
