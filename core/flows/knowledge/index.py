"""The knowledge base's vector index: similar entries for an interview (類似ナレッジ), near-duplicates.

One Chroma collection (`knowledge_entries`) for the team's shared knowledge base, embedded with the app's
embedder (core.search.embedders: the bundled multilingual model by default; embedded or a CHROMA_HOST server
alike). A vector's id is the entry's id; its document is INDEXED_FIELDS folded with core.text.textnorm.fold
(ＮＤＡ = NDA, 第８条 = 第8条); its metadata
the entry's version (reconcile re-indexes an entry whose vector is of an older version). Active entries only:
an entry is indexed when saved or edited, removed when archived, indexed again when restored. The database is
the truth: a lookup reads the entries back and drops any that are archived or gone, and
`reconcile_knowledge_index` (on the page's first visit in a process, and from its button) indexes what is
missing and deletes what should not be there. Vectors are written from the stored row after its save has
committed, carry when they were written, and a reconcile deletes one only once it is older than the grace
period (core.search.vector_age): another replica may have just saved and indexed an entry this reconcile
read too early to see. Each entry records the version whose vector was written (core.store.knowledge.index_marks),
so the job sweep re-indexes what a failed or lost vector write left behind (core.flows.knowledge.index_job).

Similar entries are the closest `SIMILAR_K` within `SIMILAR_MAX_DISTANCE` (1 - calibrated relevance); a draft's
near-duplicates are entries within `NEAR_DUPLICATE_DISTANCE`, or with the same contract type and clause.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.clock import utc_now
from core.debuglog.kept_going import kept_going
from core.flows.chat_item import ChatItem
from core.flows.knowledge.items import case_text
from core.search.embedders import Embedder, default_embedder, relevance, sentence_model
from core.search.scores import relevance_score
from core.search.vector_age import settled, stamped
from core.store.knowledge.entries import KnowledgeBaseRepository
from core.store.knowledge.index_marks import index_owed, mark_indexed
from core.text.textnorm import fold

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

log = logging.getLogger(__name__)

COLLECTION = "knowledge_entries"
SIMILAR_K = 3  # the closest few
# Distances are 1 - the embedder's calibrated relevance (core.search.embedders.relevance). With the bundled
# model, a case about a saved entry lies within ~0.6 of it and small talk beyond ~0.65 (tune half of
# tests/data/meaning/knowledge_cases.json; tests/bench/meaning.py prints both halves).
SIMILAR_MAX_DISTANCE = 0.65
SIMILAR_BEHIND_BEST = 0.2  # how much farther than the closest entry another may lie and still be shown
NEAR_DUPLICATE_DISTANCE = (
    0.44  # a draft this close (cosine ~0.88) to a saved entry is the same knowledge, reworded
)
NOTICE_NO_REFERENCES = "類似ナレッジを検索できませんでした。参考なしで聞き取りを続けます。"
CANDIDATE_POOL = 10  # vectors asked for before the database check drops archived or excluded entries


@dataclass(frozen=True)
class SimilarEntry:
    """A saved entry close to a case or a draft: the stored row and the cosine distance (0 = same)."""

    entry: dict[str, Any]
    distance: float


@dataclass
class IndexReport:
    """What `reconcile_knowledge_index` found and did."""

    entries: int = 0
    vectors: int = 0
    indexed: list[int] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed)

    def describe(self) -> str:
        """A Japanese line for the page."""
        if not self.changed:
            return f"類似検索の索引はナレッジベースと一致しています（ナレッジ {self.entries:,} 件）。"
        return (
            f"類似検索の索引を照合しました: {len(self.indexed):,} 件を登録し、"
            f"不要になった {len(self.removed):,} 件を削除しました（ナレッジ {self.entries:,} 件）。"
        )


def knowledge_collection(client: ClientAPI, embedder: Embedder | None = None) -> Collection:
    """The shared knowledge base's Chroma collection for the sentence model of `embedder` (default: the bundled
    embedder's; core.search.embedders.sentence_model says why)."""
    from core.search.vectors import get_collection  # noqa: PLC0415 - chromadb: imported when the index opens

    model = sentence_model(embedder or default_embedder())
    return get_collection(client, COLLECTION, embedder=model, metadata={"scope": "team"})


# What of an entry is embedded: its contract type, title, clause and review points carry its meaning; the action
# plan and the sample clause are generic drafting language that pulls every entry toward every other (chosen on
# the tune half of tests/data/meaning/knowledge_cases.json: same recall, small talk further away).
INDEXED_FIELDS = ("contract_type", "knowledge_title", "target_clause", "review_points")


def entry_document(entry: Mapping[str, Any]) -> str:
    """The text indexed for an entry: its INDEXED_FIELDS, one per line, folded."""
    return fold("\n".join(str(entry.get(name) or "") for name in INDEXED_FIELDS))


def index_entries(collection: Collection, entries: Iterable[Mapping[str, Any]]) -> None:
    """Upsert the vectors of `entries` (stored rows: id, version and the six fields)."""
    rows = list(entries)
    if rows:
        collection.upsert(
            ids=[str(e["id"]) for e in rows],
            documents=[entry_document(e) for e in rows],
            metadatas=[stamped({"version": int(e["version"])}) for e in rows],
        )


def unindex_entry(collection: Collection, entry_id: int) -> None:
    """Remove an entry's vector (archived or deleted)."""
    collection.delete(ids=[str(entry_id)])


def reconcile_knowledge_index(
    base: KnowledgeBaseRepository,
    collection: Collection,
    progress: Callable[[int, int], object] | None = None,
    batch: int = 200,
    now: int | None = None,
) -> IndexReport:
    """Index every active entry whose vector is missing or of an older version; delete vectors of entries that
    are archived or gone, once older than the grace period at `now` (default: the clock). A collection of
    another embedder starts empty, so switching embedders re-indexes every entry here; `progress(done, total)`
    follows the batches."""
    stored = collection.get(include=["metadatas"])  # before the entries: a vector written later is not seen
    active = base.active_versions()
    versions = {
        i: (m or {}).get("version") for i, m in zip(stored["ids"], stored["metadatas"] or [], strict=True)
    }
    old = settled(stored["ids"], stored["metadatas"], utc_now() if now is None else now)
    report = IndexReport(entries=len(active), vectors=len(versions))
    report.indexed = sorted(i for i, v in active.items() if versions.get(str(i)) != v)
    report.removed = sorted(i for i in versions if (not i.isdigit() or int(i) not in active) and i in old)
    for start in range(0, len(report.indexed), batch):
        part = report.indexed[start : start + batch]
        index_entries(collection, base.get_entries(part).values())
        if progress is not None:
            progress(start + len(part), len(report.indexed))
    if report.removed:
        collection.delete(ids=report.removed)
    # what the index now holds, in the database (an entry saved since keeps its own mark; see index_marks)
    stale, archived = index_owed(base.engine)
    remaining = set(versions) - set(report.removed)
    marks: dict[int, int | None] = {i: active[i] for i in stale if i in active}
    mark_indexed(base.engine, {**marks, **{i: None for i in archived if str(i) not in remaining}})
    return report


def _closest(
    base: KnowledgeBaseRepository,
    collection: Collection,
    text: str,
    max_distance: float,
    exclude: Mapping[str, Any],
) -> list[SimilarEntry]:
    """Active entries within `max_distance` of `text`, closest first; `exclude`: entry ids (`ids`) and a
    source interview id (`interview`) whose entries are left out."""
    total = collection.count()
    if not text.strip() or total == 0:
        return []
    found = collection.query(
        query_texts=[fold(text)], n_results=min(total, CANDIDATE_POOL), include=["distances"]
    )
    hits = [
        (int(i), round(1.0 - relevance_score(collection, d), 4))
        for i, d in zip(found["ids"][0], (found["distances"] or [[]])[0], strict=True)
        if i.isdigit()
    ]
    best = min((d for _, d in hits), default=0.0)
    # within the limit, and not far behind the closest: a case close to one entry is not "similar" to every
    # entry that shares its contract vocabulary (the bundled model puts all contract texts fairly near)
    hits = [(i, d) for i, d in hits if d <= max_distance and d <= best + SIMILAR_BEHIND_BEST]
    rows = base.get_entries([i for i, _ in hits])
    out = []
    for entry_id, distance in hits:
        row = rows.get(entry_id)
        if row is None or row["archived_at"] is not None or entry_id in exclude.get("ids", ()):
            continue
        if exclude.get("interview") and row["source_interview_id"] == exclude["interview"]:
            continue
        out.append(SimilarEntry(row, distance))
    return out


def similar_entries(
    base: KnowledgeBaseRepository,
    collection: Collection,
    case_text: str,
    *,
    interview_id: str | None = None,
    k: int = SIMILAR_K,
) -> list[SimilarEntry]:
    """The closest `k` active entries to an interview's case text within SIMILAR_MAX_DISTANCE;
    entries saved from `interview_id` itself are left out (they are its own draft)."""
    return _closest(base, collection, case_text, SIMILAR_MAX_DISTANCE, {"interview": interview_id})[:k]


def _clause_key(entry: Mapping[str, Any]) -> tuple[str, str]:
    return fold(str(entry.get("contract_type") or "")).strip(), fold(
        str(entry.get("target_clause") or "")
    ).strip()


def _same_clause(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same contract type and target clause (folded; both filled in)."""
    key = _clause_key(a)
    return all(key) and key == _clause_key(b)


def near_duplicates(
    base: KnowledgeBaseRepository,
    collection: Collection,
    embedder: Embedder,
    draft: Mapping[str, Any],
    *,
    exclude_id: int | None = None,
) -> list[SimilarEntry]:
    """Active entries that look like `draft` (asked before a new entry is saved): within
    NEAR_DUPLICATE_DISTANCE, or within SIMILAR_MAX_DISTANCE with the same contract type and clause (folded);
    closest first. `exclude_id`: the entry this draft already updates."""
    close = _closest(base, collection, entry_document(draft), SIMILAR_MAX_DISTANCE, {"ids": (exclude_id,)})
    found = [s for s in close if s.distance <= NEAR_DUPLICATE_DISTANCE or _same_clause(s.entry, draft)]
    seen = {s.entry["id"] for s in found} | {exclude_id}
    contract_type, clause = str(draft.get("contract_type") or ""), str(draft.get("target_clause") or "")
    if contract_type.strip() and clause.strip():  # same clause, however far the wording: from the database
        same = base.list_entries(contract_types=[contract_type], clause=clause)
        found += [
            SimilarEntry(e, _distance(embedder, draft, e))
            for e in same
            if e["id"] not in seen and _same_clause(e, draft)
        ]
    return sorted(found, key=lambda s: s.distance)


def _distance(embedder: Embedder, a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """The calibrated distance of two entries' documents with the index's embedder (1 - relevance)."""
    va, vb = embedder.embed_documents([entry_document(a), entry_document(b)])
    return round(1.0 - relevance(embedder.key, float(np.dot(va, vb))), 4)


@dataclass(frozen=True)
class KnowledgeIndex:
    """The knowledge base with its vector index: what the interview and the save path use."""

    base: KnowledgeBaseRepository
    collection: Collection
    embedder: Embedder

    def similar(self, case_text: str, *, interview_id: str | None = None) -> list[SimilarEntry]:
        """`similar_entries` of a case."""
        return similar_entries(self.base, self.collection, case_text, interview_id=interview_id)

    def near_duplicates(
        self, draft: Mapping[str, Any], *, exclude_id: int | None = None
    ) -> list[SimilarEntry]:
        """`near_duplicates` of a draft."""
        return near_duplicates(self.base, self.collection, self.embedder, draft, exclude_id=exclude_id)

    def index(self, entry_id: int) -> None:
        """(Re)index an entry as stored now; an archived or missing entry loses its vector instead."""
        row = self.base.get_entries([entry_id]).get(entry_id)
        if row is None or row["archived_at"] is not None:
            unindex_entry(self.collection, entry_id)
            mark_indexed(self.base.engine, {entry_id: None})
        else:
            index_entries(self.collection, [row])
            mark_indexed(self.base.engine, {entry_id: int(row["version"])})

    def reconcile(self, progress: Callable[[int, int], object] | None = None) -> IndexReport:
        """`reconcile_knowledge_index` of this base and collection."""
        return reconcile_knowledge_index(self.base, self.collection, progress)


def knowledge_index(
    base: KnowledgeBaseRepository, client: ClientAPI, embedder: Embedder | None = None
) -> KnowledgeIndex:
    """The knowledge base `base` with its collection on the Chroma `client` for the sentence model of `embedder`."""
    model = sentence_model(embedder or default_embedder())
    return KnowledgeIndex(base, knowledge_collection(client, model), model)


def find_references(
    items: list[ChatItem], interview_id: str | None, index: KnowledgeIndex | None, notices: list[str]
) -> list[dict[str, Any]]:
    """The saved entries similar to the interview's case (`case_text`), stored rows closest first;
    none without an index, and none with a notice when the lookup fails (the turn goes on without them)."""
    if index is None:
        return []
    try:
        return [s.entry for s in index.similar(case_text(items), interview_id=interview_id)]
    except Exception:  # noqa: BLE001 - SQLAlchemy and chromadb raise many types; the interview goes on
        kept_going(log, "similar-knowledge lookup failed; the turn goes on without references")
        notices.append(NOTICE_NO_REFERENCES)
        return []
