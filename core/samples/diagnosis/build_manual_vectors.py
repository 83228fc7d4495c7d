"""Compute the bundled models' vectors of the sample manuals and of the urgency examples, and ship them beside
each. Deterministic.

Run after build_manuals.py (or a change of the embedded texts): .venv/bin/python core/samples/diagnosis/build_manual_vectors.py
Writes manual_vectors-<embedder key>.npz next to this file: text digests and float32 vectors, read by
core.flows.diagnosis.manual_vectors.embed_passages (a text whose digest is missing is embedded at run time); and
urgency_vectors-<embedder key>.npz beside core/flows/diagnosis/urgency_exemplars.json, read by UrgencyJudge (run
again after examples are added). A file whose texts and vectors did not change is left as it is (a run's float noise,
about 1e-8, would otherwise rewrite megabytes in git for nothing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from core.flows.diagnosis.catalog import load_manual, load_vehicles  # noqa: E402
from core.flows.diagnosis.manual_vectors import PRECOMPUTED, chunk_vectors, text_digest  # noqa: E402
from core.flows.diagnosis.urgency_grammar import with_katakana_loanwords  # noqa: E402
from core.flows.diagnosis.urgency_meaning import EXEMPLARS_FILE, SHIPPED_VECTORS, UrgencyJudge  # noqa: E402
from core.search.embedders import BundledE5Embedder, BundledEmbedder, Matrix  # noqa: E402


def main() -> None:
    for embedder in (BundledEmbedder(), BundledE5Embedder()):  # the default, and the model alone (`e5`)
        write(embedder)
        write_urgency(embedder)


def write(embedder: BundledEmbedder | BundledE5Embedder) -> None:
    texts = sorted(
        {
            text
            for v in load_vehicles(HERE)
            for c in load_manual(v.vehicle_id, HERE)
            for _, text in chunk_vectors(c)
        }
    )
    vectors = embedder.embed_documents(texts)
    out = HERE / PRECOMPUTED.format(key=embedder.key)
    print(f"{len(texts)} vectors -> {out.name}: {save(out, texts, vectors)}")


def write_urgency(embedder: BundledEmbedder | BundledE5Embedder) -> None:
    texts = sorted({with_katakana_loanwords(t) for t in UrgencyJudge(embedder).texts})
    vectors = embedder.embed_queries(texts)
    out = EXEMPLARS_FILE.with_name(SHIPPED_VECTORS.format(key=embedder.key))
    print(f"{len(texts)} vectors -> {out.name}: {save(out, texts, vectors)}")


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
