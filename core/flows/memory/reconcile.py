"""Crash consistency of the memory stores: the database and Chroma agree again.

A unit is written to the database (with its keyword rows, in one transaction) and upserted into Chroma
after that transaction commits (core.flows.memory.indexing). A crash can leave either side behind: a kill
between the commit and the upsert leaves a unit without a vector; a unit deleted by a process killed before
its vector was removed leaves a vector without a unit. `reconcile_memory_index` indexes every unit that has
no vector (or no keyword row) and removes every vector whose unit is gone, but only once that vector is
older than the grace period (core.search.vector_age): another replica may have just written it for a unit
committed after this reconcile read the units. Vectors are listed before the units for the same reason.

Per person: it runs over one person's units (`repo.owner_id`) and that person's own Chroma
collection (core.flows.memory.stores.memory_collection), so a vector is "without a unit" only when its
owner has no such unit. The memory page runs it once per process for each person, when that person first
opens the page (a person's memory is read only on their own page, so nothing is served from an
unreconciled index, and start-up does not pay for everyone's), and from its 「索引を照合」 button.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.clock import utc_now
from core.flows.memory.indexing import index_units
from core.search.vector_age import settled
from core.store.memory.keyword_lanes import fts_bodies
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY, mine, units

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

INDEXED_KINDS = (KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY)


@dataclass
class ReconcileReport:
    """What reconciliation found and did."""

    units: int = 0
    vectors: int = 0
    indexed: list[int] = field(default_factory=list)  # units given a vector (or FTS5 rows)
    removed: list[str] = field(default_factory=list)  # vector ids without a unit, deleted

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed)

    def describe(self) -> str:
        """A Japanese line for the page."""
        if not self.changed:
            return f"記憶の索引はデータベースと一致しています（記憶 {self.units:,} 件・ベクトル {self.vectors:,} 件）。"
        return (
            f"記憶の索引を照合しました: 索引のなかった記憶 {len(self.indexed):,} 件を登録し、"
            f"記憶のないベクトル {len(self.removed):,} 件を削除しました（記憶 {self.units:,} 件）。"
        )


def reconcile_memory_index(
    repo: MemoryRepository,
    collection: Collection | None,
    batch: int = 2_000,
    progress: Callable[[int, int], object] | None = None,
    now: int | None = None,
) -> ReconcileReport:
    """Index the person's units without vectors or FTS5 rows; delete vectors without units, older than the
    grace period at `now` (default: the clock), from the person's `collection` (`repo` and `collection` are
    one person's). A collection of another embedder starts empty, so switching embedders re-indexes
    everything here; `progress(done, total)` follows the batches."""
    report = ReconcileReport()
    now = utc_now() if now is None else now
    stored = collection.get(include=["metadatas"]) if collection is not None else None  # before the units
    with repo.connect() as conn:
        expected = [
            int(i)
            for i in conn.execute(
                select(units.c.id).where(units.c.kind.in_(INDEXED_KINDS), mine(repo.owner_id))
            ).scalars()
        ]
        report.units = len(expected)
        in_fts: set[int] = set()
        for start in range(0, len(expected), batch):
            in_fts.update(fts_bodies(conn, expected[start : start + batch]))
    missing = set(expected) - in_fts
    if stored is not None:
        vector_ids = set(stored["ids"])
        report.vectors = len(vector_ids)
        wanted = {str(i) for i in expected}
        missing |= {i for i in expected if str(i) not in vector_ids}
        report.removed = sorted((vector_ids - wanted) & settled(stored["ids"], stored["metadatas"], now))
    report.indexed = sorted(missing)
    for start in range(0, len(report.indexed), batch):
        with repo.begin() as conn:  # one transaction per batch: its vectors are written when it commits
            index_units(conn, collection, report.indexed[start : start + batch])
        if progress is not None:
            progress(min(start + batch, len(report.indexed)), len(report.indexed))
    if collection is not None and report.removed:
        collection.delete(ids=report.removed)
    return report
