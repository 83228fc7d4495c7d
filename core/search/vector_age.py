"""How old a vector is, so that a reconcile on one replica never deletes what another replica just wrote.

Every vector written by the flows carries `indexed_at` (UTC epoch seconds) in its metadata. A reconcile
deletes a vector whose row it cannot see only once that vector is older than RECONCILE_GRACE_SECONDS: the
row may belong to a transaction that had not committed when the reconcile read the rows (another replica,
an older version of this one), or have been committed just after. Vectors written before the stamp existed
count as old.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.clock import utc_now

# Ours: two minutes is far longer than any save transaction plus its vector write, and short enough that a
# real orphan (its row deleted, its vector left by a crash) goes at the next reconcile after that.
RECONCILE_GRACE_SECONDS = 120
INDEXED_AT = "indexed_at"  # vector metadata key: when the vector was written (UTC epoch seconds)


def stamped(metadata: Mapping[str, Any], now: int | None = None) -> dict[str, Any]:
    """`metadata` with `indexed_at` set to `now` (default: the clock)."""
    return {**metadata, INDEXED_AT: utc_now() if now is None else now}


def settled(ids: Sequence[str], metadatas: Sequence[Mapping[str, Any] | None] | None, now: int) -> set[str]:
    """The ids among `ids` whose vector is at least RECONCILE_GRACE_SECONDS old at `now` (or unstamped)."""
    metas = list(metadatas or [None] * len(ids))
    out = set()
    for vector_id, meta in zip(ids, metas, strict=True):
        written = (meta or {}).get(INDEXED_AT)
        if not isinstance(written, int | float) or now - written >= RECONCILE_GRACE_SECONDS:
            out.add(vector_id)
    return out
