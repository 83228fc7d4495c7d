"""Compute the bundled models' vectors of the sample manuals and of the urgency examples, and ship them beside
each. Deterministic.

Run after build_manuals.py (or a change of the embedded texts): .venv/bin/python core/samples/diagnosis/build_manual_vectors.py
Writes manual_vectors-<embedder key>.npz next to this file: text digests and float32 vectors, read by
core.flows.diagnosis.manual_vectors.embed_passages (a text whose digest is missing is embedded at run time); and
urgency_vectors-<embedder key>.npz beside core/flows/diagnosis/urgency_exemplars.json, read by UrgencyJudge (run
again after examples are added).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from core.flows.diagnosis.catalog import load_manual, load_vehicles  # noqa: E402
from core.flows.diagnosis.manual_vectors import PRECOMPUTED, chunk_vectors, text_digest  # noqa: E402
from core.flows.diagnosis.urgency_meaning import (  # noqa: E402
    EXEMPLARS_FILE,
    SHIPPED_VECTORS,
    UrgencyJudge,
    with_katakana_loanwords,
)
from core.search.embedders import BundledE5Embedder, BundledEmbedder  # noqa: E402


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
    np.savez_compressed(out, digests=np.array([text_digest(t) for t in texts]), vectors=vectors)
    print(f"{len(texts)} vectors -> {out.name}")


def write_urgency(embedder: BundledEmbedder | BundledE5Embedder) -> None:
    texts = sorted({with_katakana_loanwords(t) for t in UrgencyJudge(embedder).texts})
    vectors = embedder.embed_queries(texts)
    out = EXEMPLARS_FILE.with_name(SHIPPED_VECTORS.format(key=embedder.key))
    np.savez_compressed(out, digests=np.array([text_digest(t) for t in texts]), vectors=vectors)
    print(f"{len(texts)} vectors -> {out.name}")


if __name__ == "__main__":
    main()
