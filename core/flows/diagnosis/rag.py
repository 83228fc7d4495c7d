"""RAG over the owner's manuals (spec 04 §10 RAGService) on a Chroma collection.

Chunks carry metadata (vehicle_id, page, section, content_type, has_warning); every search is
filtered by vehicle_id, returns at most 5 results and keeps only score > 0.3.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # chromadb takes over a second to import; the Chroma client arrives built
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

from core.contracts.prompts import fill, load_prompt
from core.debuglog.events import DebugSink
from core.flows.diagnosis.catalog import load_manual, load_vehicles
from core.flows.diagnosis.constants import (
    FLOW_TAG,
    RAG_COLLECTION,
    RAG_DENSE_POOL,
    RAG_LEXICAL_FLOOR,
    RAG_LEXICAL_POOL,
    RAG_LEXICAL_WEIGHT,
    RAG_N_RESULTS,
    RAG_OFF_TOPIC_MARGIN,
    RAG_SCORE_THRESHOLD,
    SAMPLES_DIR,
)
from core.flows.diagnosis.manual_vectors import best_per_chunk, chunk_of, chunk_vectors, embed_passages
from core.guard.json_guard import GuardResult, guarded_text
from core.llm.base import LLMClient
from core.search.embedders import Embedder, Matrix, default_embedder
from core.search.fusion import rrf_merge
from core.search.lexical import LexicalIndex
from core.search.scores import relevance_score
from core.text.romaji import kana_reading

OFF_TOPIC_FILE = Path(__file__).with_name("off_topic_examples.json")
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


def lexical_relevance(coverage: float) -> float:
    """The lexical lane's relevance: 0 up to RAG_LEXICAL_FLOOR of the query's (IDF-weighted) keys found in a
    chunk, rising to 1 when all are; a chunk that shares one everyday word with small talk stays below 0.3."""
    return max(0.0, (coverage - RAG_LEXICAL_FLOOR) / (1.0 - RAG_LEXICAL_FLOOR))


def _lexical_text(chunk: Mapping[str, Any]) -> str:
    """What the lexical lane reads of a chunk: its heading and whole text."""
    return f"{chunk['section']}\n{chunk['text']}"


def _source(cid: str, meta: Mapping[str, Any], score: float) -> dict[str, Any]:
    """A search hit as the flow passes it on (spec 04 §10 metadata + score)."""
    return {
        "chunk_id": cid,
        "vehicle_id": meta["vehicle_id"],
        "content": meta["text"],
        "page": _metadata_int(meta["page"]),
        "section": meta["section"],
        "content_type": meta["content_type"],
        "has_warning": bool(meta["has_warning"]),
        "score": round(score, 4),
    }


def _document(chunk: Mapping[str, Any]) -> str:
    """Everything that is embedded of a chunk (its vectors' texts): what the manual version hashes."""
    return "\n".join(text for _, text in chunk_vectors(chunk))


def _chunk_metadata(chunk: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The metadata every vector of a chunk carries (spec 04 §10) plus its chunk id and the manual version."""
    return {
        "chunk_id": chunk["id"],
        "vehicle_id": chunk["vehicle_id"],
        "page": chunk["page"],
        "section": chunk["section"],
        "chapter": chunk["chapter"],
        "content_type": chunk["content_type"],
        "has_warning": bool(chunk["has_warning"]),
        "text": chunk["text"],
        "manual_version": version,
    }


class RAGService:
    """Index and search the sample manuals in one Chroma collection (spec 04 §10)."""

    def __init__(
        self,
        chroma_client: ClientAPI,
        *,
        collection_name: str = RAG_COLLECTION,
        samples_dir: Path = SAMPLES_DIR,
        embedder: Embedder | None = None,
        lexical_lane: bool = True,
    ):
        self.client = chroma_client
        self.embedder = embedder or default_embedder()
        self.lexical_lane = lexical_lane  # False: the dense lane alone (how the manuals were searched before)
        self._lexical: LexicalIndex[str] | None = None
        self._off_topic_vectors: Matrix | None = None
        self.collection_name = collection_name
        self.samples_dir = samples_dir
        self._collection: Collection | None = None

    @property
    def collection(self) -> Collection:
        if self._collection is None:
            from core.search.vectors import get_collection  # noqa: PLC0415 - chromadb: imported on first search

            self._collection = get_collection(
                self.client, self.collection_name, embedder=self.embedder, metadata={"flow": FLOW_TAG}
            )
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

    def _vector_ids(self) -> set[str]:
        return {vid for c in self._all_chunks() for vid, _ in chunk_vectors(c)}

    def chunk_count(self) -> int:
        """How many manual chunks the index holds (the page's sidebar shows it)."""
        return len({chunk_of(i) for i in self.collection.get(include=[])["ids"]})

    def is_indexed(self) -> bool:
        """True when the collection holds exactly the current manuals' vectors."""
        chunks = self._all_chunks()
        if self.collection.count() != len(self._vector_ids()):
            return False
        got = self.collection.get(ids=[chunks[0]["id"]], include=["metadatas"])
        metas = got.get("metadatas") or []
        return bool(metas) and metas[0].get("manual_version") == self.manual_version()

    def index_manuals(self, progress: Progress | None = None, *, force: bool = False, batch: int = 40) -> int:
        """Index every sample manual (skipped when already current unless `force`); returns the chunk count."""
        if force:
            self.client.delete_collection(self.collection.name)
            self._collection = None
        elif self.is_indexed():
            return len(self._all_chunks())
        chunks = self._all_chunks()
        version = self.manual_version()
        stale = set(self.collection.get(include=[])["ids"]) - self._vector_ids()
        if stale:
            self.collection.delete(ids=sorted(stale))
        self._upsert(chunks, version, progress, batch)
        return len(chunks)

    def reconcile(self, progress: Progress | None = None, batch: int = 40) -> tuple[int, int]:
        """Make the index hold exactly the current manuals, chunk by chunk.

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
        stale = sorted(set(got["ids"]) - self._vector_ids())
        if stale:
            self.collection.delete(ids=stale)
        missing = [c for c in chunks if any(vid not in current for vid, _ in chunk_vectors(c))]
        self._upsert(missing, version, progress, batch)
        return len(missing), len(stale)

    def _upsert(
        self, chunks: list[dict[str, Any]], version: str, progress: Progress | None, batch: int
    ) -> None:
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            vectors = [(c, vid, text) for c in part for vid, text in chunk_vectors(c)]
            self.collection.upsert(
                ids=[vid for _, vid, _ in vectors],
                embeddings=list(embed_passages(self.embedder, [t for _, _, t in vectors], self.samples_dir)),
                documents=[text for _, _, text in vectors],
                metadatas=[_chunk_metadata(c, version) for c, _, _ in vectors],
            )
            if progress is not None:
                progress(min(start + batch, len(chunks)), len(chunks), part[-1]["vehicle_id"])

    def reindex(self, progress: Progress | None = None) -> int:
        """Drop the collection and index again."""
        return self.index_manuals(progress, force=True)

    def _off_topic(self, vector: Matrix, cosines: Sequence[float]) -> bool:
        """True when the query lies nearer to everyday small talk (off_topic_examples.json) than to any manual
        text, by RAG_OFF_TOPIC_MARGIN: nothing of the manual is related, however the scores fall."""
        if self._off_topic_vectors is None:
            examples = json.loads(OFF_TOPIC_FILE.read_text(encoding="utf-8"))["examples"]
            self._off_topic_vectors = self.embedder.embed_queries(examples)
        nearest_example = float((self._off_topic_vectors @ vector).max())
        return nearest_example > max(cosines, default=-1.0) + RAG_OFF_TOPIC_MARGIN

    def _lexical_index(self) -> LexicalIndex[str]:
        if self._lexical is None:
            self._lexical = LexicalIndex.build({c["id"]: _lexical_text(c) for c in self._all_chunks()})
        return self._lexical

    def search(self, query: str, vehicle_id: str, n_results: int = RAG_N_RESULTS) -> list[dict[str, Any]]:
        """spec 04 §10: the vehicle's top `n_results` chunks with score > 0.3, best first.

        Hybrid: the dense lane (every chunk of the vehicle, cosine calibrated for the embedder) and the
        lexical lane (BM25 over Sudachi keys) are fused by RRF to pick the best `n_results`, returned best score
        first; a chunk's score is the higher of
        its dense relevance and its lexical coverage, so the 0.3 threshold keeps spec 04's meaning (what is
        unrelated by meaning and by words is dropped).
        """
        if not query.strip() or not vehicle_id:
            return []
        # a symptom typed in romaji is searched as read in kana (core.text.romaji)
        query = kana_reading(query)
        vector = self.embedder.embed_queries([query])
        res = self.collection.query(
            query_embeddings=list(vector),
            n_results=RAG_DENSE_POOL,
            where={"vehicle_id": vehicle_id},
            include=["metadatas", "distances"],
        )
        metadatas, distances = res["metadatas"], res["distances"]
        if metadatas is None or distances is None:  # Chroma returns both: `include` asks for them
            return []
        meta_of: dict[str, Mapping[str, Any]] = {}
        vector_ids, scores = [], []
        for vid, meta, dist in zip(res["ids"][0], metadatas[0], distances[0], strict=True):
            if meta.get("vehicle_id") == vehicle_id:
                meta_of[chunk_of(vid)] = meta
                vector_ids.append(vid)
                scores.append(relevance_score(self.collection, dist))
        dense = best_per_chunk(vector_ids, scores)
        if self._off_topic(vector[0], [1.0 - float(d) for d in distances[0]]):
            return []
        lexical: dict[str, float] = {}
        if self.lexical_lane:
            hits = self._lexical_index().search(query, RAG_LEXICAL_POOL, allowed=set(meta_of))
            lexical = {cid: lexical_relevance(coverage) for cid, _, coverage in hits}
        fused = rrf_merge([list(dense), list(lexical)], weights=(1.0, RAG_LEXICAL_WEIGHT))
        sources = []
        for cid, _ in fused:
            score = dense.get(cid, 0.0)
            if score <= RAG_SCORE_THRESHOLD:  # words the owner used that the model did not weigh
                score = max(score, lexical.get(cid, 0.0))
            if score > RAG_SCORE_THRESHOLD:
                sources.append(_source(cid, meta_of[cid], score))
        return sorted(sources[:n_results], key=lambda s: -s["score"])  # the fusion picks, the score orders

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
