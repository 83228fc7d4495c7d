"""Compute the bundled models' vectors of the sample manuals and of the urgency examples, and ship them beside
each.

Run after build_manuals.py (or a change of the embedded texts): .venv/bin/python core/samples/diagnosis/build_manual_vectors.py
Writes manual_vectors-<embedder key>.npz next to this file: text digests and float32 vectors, read by
core.flows.diagnosis.manual_vectors.embed_passages (a text whose digest is missing is embedded at run time); and
urgency_vectors-<embedder key>.npz beside core/flows/diagnosis/urgency_exemplars.json, read by UrgencyJudge (run
again after examples are added).

The shipped files are a cache by text digest: a text already in one keeps its vector and only new texts are embedded
(`--all` embeds every text again). The engine's output is the same run to run on one machine, but not across machines:
the same wheel gives vectors that differ by up to ~3e-3 per component (cosine 0.9999) on another CPU, so re-embedding
every text would rewrite every vector, and megabytes in git, for nothing. Before keeping them, a sample of the kept
vectors is embedded again; if any is further than SAME_MODEL from its shipped vector (another model, another prompt
convention), every text is embedded again. A file whose texts and vectors did not change is left as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from core.flows.diagnosis.catalog import load_manual, load_vehicles  # noqa: E402
from core.flows.diagnosis.manual_vectors import (  # noqa: E402
    PRECOMPUTED,
    chunk_vectors,
    precomputed_file,
    text_digest,
)
from core.flows.diagnosis.urgency_grammar import with_katakana_loanwords  # noqa: E402
from core.flows.diagnosis.urgency_meaning import EXEMPLARS_FILE, SHIPPED_VECTORS, UrgencyJudge  # noqa: E402
from core.search.embedders import BundledE5Embedder, BundledEmbedder, Matrix  # noqa: E402
from core.search.precomputed import SAME_MODEL  # noqa: E402


def main() -> None:
    every = "--all" in sys.argv[1:]
    for embedder in (BundledEmbedder(), BundledE5Embedder()):  # the default, and the model alone (`e5`)
        write(embedder, every)
        write_urgency(embedder, every)


def write(embedder: BundledEmbedder | BundledE5Embedder, every: bool = False) -> None:
    texts = sorted(
        {
            text
            for v in load_vehicles(HERE)
            for c in load_manual(v.vehicle_id, HERE)
            for _, text in chunk_vectors(c)
        }
    )
    out = HERE / PRECOMPUTED.format(key=embedder.key)
    vectors, embedded = vectors_of(texts, {} if every else precomputed_file(out), embedder.embed_documents)
    print(f"{len(texts)} vectors ({embedded} embedded) -> {out.name}: {save(out, texts, vectors)}")


def write_urgency(embedder: BundledEmbedder | BundledE5Embedder, every: bool = False) -> None:
    texts = sorted({with_katakana_loanwords(t) for t in UrgencyJudge(embedder).texts})
    out = EXEMPLARS_FILE.with_name(SHIPPED_VECTORS.format(key=embedder.key))
    vectors, embedded = vectors_of(texts, {} if every else precomputed_file(out), embedder.embed_queries)
    print(f"{len(texts)} vectors ({embedded} embedded) -> {out.name}: {save(out, texts, vectors)}")


CHECKED = 16


def vectors_of(
    texts: list[str], shipped: dict[str, Matrix], embed: Callable[[list[str]], Matrix]
) -> tuple[Matrix, int]:
    """The vectors of `texts` (in order) and how many were embedded: a text with a shipped vector keeps it, unless a
    sample of the kept ones, embedded again, is not the same model's (cosine below SAME_MODEL); then all are embedded."""
    kept = [t for t in texts if text_digest(t) in shipped]
    sample = kept[:: max(1, len(kept) // CHECKED)]
    if sample:
        again = embed(sample)
        if (
            min(float(np.dot(shipped[text_digest(t)], v)) for t, v in zip(sample, again, strict=True))
            < SAME_MODEL
        ):
            shipped = {}
    new = [t for t in texts if text_digest(t) not in shipped]
    fresh = dict(zip(new, embed(new), strict=True)) if new else {}
    rows = [shipped[text_digest(t)] if t not in fresh else fresh[t] for t in texts]
    return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 0), np.float32), len(new)


# Vectors closer than this to the shipped ones are the same vectors (a rebuild differs by about 1e-8).
SAME_VECTORS = 1e-6


def save(out: Path, texts: list[str], vectors: Matrix) -> str:
    """Write the texts' digests and their vectors to `out` ("written"), unless it already holds the same digests with
    the same vectors ("unchanged")."""
    digests = np.array([text_digest(t) for t in texts])
    if out.exists():
        with np.load(out) as shipped:
            if np.array_equal(shipped["digests"], digests) and np.allclose(
                shipped["vectors"], vectors, atol=SAME_VECTORS, rtol=0
            ):
                return "unchanged"
    np.savez_compressed(out, digests=digests, vectors=vectors)
    return "written"


if __name__ == "__main__":
    main()
