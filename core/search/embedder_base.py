"""The embedder interface and what every implementation shares: the error type, unit-length rows, and the
clip to what the model reads. Kept apart from the implementations so the provider embedders
(core.search.provider_embedders) and the built-in ones (core.search.embedders) both build on it without
importing each other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
# e5-small reads at most 512 tokens; Japanese runs about one token per character, so longer text is cut here
# rather than inside the engine (what is cut is the tail, which for our documents is the least telling part).
MAX_CHARS = 1_000


class EmbeddingError(RuntimeError):
    """The embedder could not embed (an endpoint refused or was unreachable); the message is Japanese."""


class Embedder(Protocol):
    """Text in, unit-length vectors out; queries and documents may be embedded differently (e5 prefixes)."""

    @property
    def key(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    def embed_queries(self, texts: Sequence[str]) -> Matrix: ...


def unit_rows(rows: npt.ArrayLike) -> Matrix:
    """float32 rows scaled to unit length (a zero row stays zero)."""
    m = np.asarray(rows, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = (m / norms).astype(np.float32)
    return out


def clip(texts: Sequence[str]) -> list[str]:
    # A text with nothing in it still gets a vector (the same one for every such text), like the n-gram hash.
    return [(t or " ")[:MAX_CHARS] for t in texts]
