"""RAG over the owner's manuals (spec 04 §10 RAGService) on a Chroma collection.

Chunks carry metadata (vehicle_id, page, section, content_type, has_warning); every search is
filtered by vehicle_id, returns at most 5 results and keeps only score > 0.3.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from core.debuglog import DebugSink
from core.flows.diagnosis.catalog import load_manual, load_vehicles
from core.flows.diagnosis.constants import (
    FLOW_TAG,
    RAG_COLLECTION,
    RAG_N_RESULTS,
    RAG_SCORE_THRESHOLD,
    SAMPLES_DIR,
)
from core.guard import GuardResult, guarded_text
from core.llm.base import LLMClient
from core.prompts import fill, load_prompt
from core.vectors import NgramHashEmbedding, cosine_score, get_collection

Progress = Callable[[int, int, str], object]  # done, total, label; what it returns is ignored


@dataclass
class RagAnswer:
    """spec 04 §10: {answer, sources}; `ok` is False when the answer call failed (sources still valid)."""

    answer: str
    sources: list[dict[str, Any]] = field(default_factory=list)
    ok: bool = True
    error: str = ""


def vehicle_text(make: str, model: str, year: int | str) -> str:
    return f"{make} {model}（{year}年式）" if make else "（未選択）"


def format_excerpts(sources: Sequence[dict[str, Any]]) -> str:
    """Manual excerpts as prompt text: one block per source with page, section and type."""
    if not sources:
        return "（該当なし）"
    lines = []
    for s in sources:
        mark = "【警告あり】" if s.get("has_warning") else ""
        lines.append(
            f"- p.{s['page']}「{s['section']}」({s['content_type']}){mark} 関連度 {s['score']:.2f}\n  {s['content']}"
        )
    return "\n".join(lines)


def _metadata_int(value: object) -> int:
    """A number stored in Chroma metadata, as int (metadata values are typed as a wide union)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"manual chunk metadata is not a number: {value!r}")


def _document(chunk: dict[str, Any]) -> str:
    """The text that is embedded: the chunk's index text (heading, index terms, first sentence)."""
    return str(chunk.get("index_text") or f"{chunk['section']}：{chunk['text']}")


class RAGService:
    """Index and search the sample manuals in one Chroma collection (spec 04 §10)."""

    def __init__(
        self,
        chroma_client: ClientAPI,
        *,
        collection_name: str = RAG_COLLECTION,
        samples_dir: Path = SAMPLES_DIR,
    ):
        self.client = chroma_client
        self.collection_name = collection_name
        self.samples_dir = samples_dir
        self._collection: Collection | None = None

    @property
    def collection(self) -> Collection:
        if self._collection is None:
            self._collection = get_collection(self.client, self.collection_name, metadata={"flow": FLOW_TAG})
        return self._collection

    def _all_chunks(self) -> list[dict[str, Any]]:
        return [
            c for v in load_vehicles(self.samples_dir) for c in load_manual(v.vehicle_id, self.samples_dir)
        ]

    def manual_version(self) -> str:
        """A hash of every chunk: a changed manual makes the index stale."""
        digest = hashlib.sha256()
        for chunk in self._all_chunks():
            digest.update(chunk["id"].encode() + _document(chunk).encode())
        return digest.hexdigest()[:16]

    def chunk_count(self) -> int:
        """How many manual chunks the index holds (the page's sidebar shows it)."""
        return int(self.collection.count())

    def is_indexed(self) -> bool:
        """True when the collection holds exactly the current manuals."""
        chunks = self._all_chunks()
        if self.collection.count() != len(chunks):
            return False
        got = self.collection.get(ids=[chunks[0]["id"]], include=["metadatas"])
        metas = got.get("metadatas") or []
        return bool(metas) and metas[0].get("manual_version") == self.manual_version()

    def index_manuals(self, progress: Progress | None = None, *, force: bool = False, batch: int = 40) -> int:
        """Index every sample manual (skipped when already current unless `force`); returns the chunk count."""
        if force:
            get_collection(
                self.client, self.collection_name, metadata={"flow": FLOW_TAG}
            )  # deleting needs one
            self.client.delete_collection(self.collection_name)
            self._collection = None
        elif self.is_indexed():
            return self.collection.count()
        chunks = self._all_chunks()
        version = self.manual_version()
        stale = set(self.collection.get(include=[])["ids"]) - {c["id"] for c in chunks}
        if stale:
            self.collection.delete(ids=sorted(stale))
        self._upsert(chunks, version, progress, batch)
        return len(chunks)

    def reconcile(self, progress: Progress | None = None, batch: int = 40) -> tuple[int, int]:
        """Make the index hold exactly the current manuals, chunk by chunk (issue #15 item 6).

        Chunks without a vector (or with one from another manual version) are indexed and vectors
        without a chunk are removed, so an indexing run cut short by a crash is completed on the next
        start. Returns (chunks indexed, vectors removed).
        """
        chunks = self._all_chunks()
        version = self.manual_version()
        got = self.collection.get(include=["metadatas"])
        current = {
            i
            for i, meta in zip(got["ids"], got.get("metadatas") or [], strict=False)
            if (meta or {}).get("manual_version") == version
        }
        stale = sorted(set(got["ids"]) - {c["id"] for c in chunks})
        if stale:
            self.collection.delete(ids=stale)
        missing = [c for c in chunks if c["id"] not in current]
        self._upsert(missing, version, progress, batch)
        return len(missing), len(stale)

    def _upsert(
        self, chunks: list[dict[str, Any]], version: str, progress: Progress | None, batch: int
    ) -> None:
        embed = NgramHashEmbedding()
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            self.collection.upsert(
                ids=[c["id"] for c in part],
                embeddings=embed([_document(c) for c in part]),
                documents=[c["text"] for c in part],
                metadatas=[
                    {
                        "vehicle_id": c["vehicle_id"],
                        "page": c["page"],
                        "section": c["section"],
                        "chapter": c["chapter"],
                        "content_type": c["content_type"],
                        "has_warning": bool(c["has_warning"]),
                        "text": c["text"],
                        "manual_version": version,
                    }
                    for c in part
                ],
            )
            if progress is not None:
                progress(min(start + batch, len(chunks)), len(chunks), part[-1]["vehicle_id"])

    def reindex(self, progress: Progress | None = None) -> int:
        """Drop the collection and index again."""
        return self.index_manuals(progress, force=True)

    def search(self, query: str, vehicle_id: str, n_results: int = RAG_N_RESULTS) -> list[dict[str, Any]]:
        """spec 04 §10: the vehicle's top `n_results` chunks with score > 0.3, best first."""
        if not query.strip() or not vehicle_id:
            return []
        res = self.collection.query(
            query_texts=[query],
            n_results=n_results,
            where={"vehicle_id": vehicle_id},
            include=["metadatas", "distances"],
        )
        metadatas, distances = res["metadatas"], res["distances"]
        if metadatas is None or distances is None:  # Chroma returns both: `include` asks for them
            return []
        sources = []
        for cid, meta, dist in zip(res["ids"][0], metadatas[0], distances[0], strict=True):
            score = cosine_score(dist)
            if score > RAG_SCORE_THRESHOLD and meta.get("vehicle_id") == vehicle_id:
                sources.append(
                    {
                        "chunk_id": cid,
                        "vehicle_id": meta["vehicle_id"],
                        "content": meta["text"],
                        "page": _metadata_int(meta["page"]),
                        "section": meta["section"],
                        "content_type": meta["content_type"],
                        "has_warning": bool(meta["has_warning"]),
                        "score": round(score, 4),
                    }
                )
        return sources

    def query(
        self,
        symptom: str,
        vehicle_id: str,
        make: str,
        model: str,
        year: int,
        *,
        client: LLMClient,
        sink: DebugSink | None = None,
        system_prompt: str | None = None,
    ) -> RagAnswer:
        """spec 04 §10: search, then RAG_ANSWER_PROMPT (hits) or NO_RAG_ANSWER_PROMPT (none) through the guard."""
        sources = self.search(symptom, vehicle_id)
        messages = build_rag_messages(symptom, sources, make, model, year, system_prompt)
        result = guarded_text(client, messages, sink=sink, tags={"flow": FLOW_TAG, "step": "rag_answer"})
        assert isinstance(result, GuardResult)
        if not result.ok:
            return RagAnswer("", sources, ok=False, error=result.message)
        return RagAnswer(result.text.strip(), sources)


def build_rag_messages(
    symptom: str,
    sources: Sequence[dict[str, Any]],
    make: str,
    model: str,
    year: int,
    system_prompt: str | None = None,
) -> list[dict[str, str]]:
    """The message stack of the RAG answer call: system, then the filled RAG / NO_RAG prompt."""
    vehicle = vehicle_text(make, model, year)
    if sources:
        user = fill(
            load_prompt("rag_answer_prompt"),
            VEHICLE=vehicle,
            SYMPTOM=symptom,
            MANUAL_EXCERPTS=format_excerpts(sources),
        )
    else:
        user = fill(load_prompt("no_rag_answer_prompt"), VEHICLE=vehicle, SYMPTOM=symptom)
    system = system_prompt if system_prompt is not None else load_prompt("diagnosis_system_prompt")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
