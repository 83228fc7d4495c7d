"""Rewrite the bundled model's table of sample passages (core/samples/vectors/e5small-q4.npz).

Run after the sample conversation, its templates or the demo model's extraction change:
    .venv/bin/python core/samples/vectors/build_sample_vectors.py
It loads the sample memories into a throwaway store and says the demo turns (what the one-click demo and
its suggestions send), with an embedder that runs the model on every passage and records it, then writes
the passages and their vectors out.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from core.flows.memory.chat import run_turn
from core.flows.memory.sample_data import DEMO_TURNS, load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.search.embedder_base import clip
from core.search.embedders import BundledE5Embedder, Matrix, _E5Engine
from core.search.precomputed import QUERY_PREFIX, write_table
from core.search.vectors import open_chroma
from core.store import open_store


class RecordingE5(BundledE5Embedder):
    """The bundled model, run on every passage (never the table), remembering what it embedded."""

    def __init__(self) -> None:
        self.seen: dict[str, Matrix] = {}

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        clipped = clip(texts)
        out = _E5Engine.encode(clipped, False)
        self.seen.update(zip(clipped, out, strict=True))
        return out

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        clipped = clip(texts)
        out = _E5Engine.encode(clipped, True)
        self.seen.update(zip((QUERY_PREFIX + t for t in clipped), out, strict=True))
        return out


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="samplevectors"))
    embedder = RecordingE5()
    repo = memory_repository(open_store(tmp), LOCAL_PERSON)
    collection = memory_collection(open_chroma(tmp), LOCAL_PERSON, embedder)
    load_demo_samples(repo, collection)
    history: list[dict[str, str]] = []
    for text in DEMO_TURNS:
        _, outcome = run_turn(repo, collection, demo_client(), history, text)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply_text}]
    path = write_table(embedder.key, list(embedder.seen), list(embedder.seen.values()))
    print(f"{len(embedder.seen)} passages -> {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
