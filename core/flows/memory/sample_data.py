"""Seeded sample memories (about 200 episodes of Japanese conversation, through the same pipeline)."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from core.debuglog.events import DebugSink
from core.flows.memory.constants import DAY, FLOW
from core.flows.memory.demo import memory_persona
from core.flows.memory.extraction import DEFAULT_REFLECTION, call_extractors, run_reflection
from core.flows.memory.extraction_store import store_extraction
from core.flows.memory.indexing import index_units
from core.flows.memory.loops import loop_times
from core.flows.memory.normalize import normalize_loops
from core.guard.json_guard import GuardResult
from core.llm.base import LLMClient
from core.llm.demo import DemoClient
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import mine, payload_episode, units

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "memory"
SAMPLE_SEED = 20261121
SAMPLE_EPISODES = 200
SAMPLE_DAYS = 60
# What the one-click demo says to 灯 (the first turn is sent for the person; the rest are offered as
# suggestions): news, a new hobby, a family event, a dislike with a question back, and one real promise.
DEMO_TURNS = (
    "こんばんは、灯。同僚の田中さんとまた新宿でラーメンを食べてきたよ。ラーメンはやっぱり好きだな。",
    "最近ヨガを始めて、朝に15分だけやってるんだ。",
    "来月、妹の結婚式で京都に行くんだ。スピーチを頼まれてちょっと緊張してる。",
    "パクチーはどうも苦手なんだよね。灯は苦手な食べ物ある？",
    "週末に田中さんにミステリー小説を貸す約束をしたんだ。忘れないように覚えておいてね。",
)


@dataclass(frozen=True)
class Exchange:
    occurred_at: int
    input_text: str
    reply_text: str


def generate_conversation(
    now: int, count: int = SAMPLE_EPISODES, seed: int = SAMPLE_SEED, days: int = SAMPLE_DAYS
) -> list[Exchange]:
    """`count` exchanges spread over the last `days` days, oldest first; the same seed gives the same list."""
    data = json.loads((SAMPLES / "conversation_templates.json").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    start = now - days * DAY
    times = sorted(start + rng.randrange(days * DAY - 3600) for _ in range(count))
    out = []
    for ts in times:
        user, reply = rng.choice(data["templates"])
        person = rng.choice(data["people"])
        slots = {
            "person": person["name"],
            "relation": person["relation"],
            "place": rng.choice(data["places"]),
            "food": rng.choice(data["foods"]),
            "hobby": rng.choice(data["hobbies"]),
            "work": rng.choice(data["work"]),
            "bad": rng.choice(data["bad"]),
        }
        out.append(Exchange(ts, user.format(**slots), reply.format(**slots)))
    return out


# Exchanges stored per transaction and per Chroma upsert while loading many: one commit and one embedding
# batch per chunk instead of three commits and two upserts per exchange (the sample loads in ~1/10 the time).
INGEST_CHUNK = 50
Progress = Callable[[int, int], None]


def _analyse(client: LLMClient, exchange: Exchange, sink: DebugSink | None) -> tuple[Any, dict[str, Any]]:
    """The model calls of one past exchange: its reflection and its extraction (no store access)."""
    ts = exchange.occurred_at
    reflection = run_reflection(client, exchange.input_text, exchange.reply_text, ts, ts, sink)
    results = call_extractors(client, exchange.input_text, exchange.reply_text, ts, ts, sink)
    return reflection, results


def ingest_exchanges(
    repo: MemoryRepository,
    client: LLMClient,
    exchanges: list[Exchange],
    sink: DebugSink | None = None,
    collection: Collection | None = None,
) -> list[int]:
    """Past exchanges through the pipeline in one transaction: reflection and extraction calls, the
    episodes and what was extracted from them, then every new unit indexed (FTS5 and one Chroma upsert).
    Times are each exchange's own (loops expire relative to it). Returns the episodes' ids."""
    load_now = repo.now()
    analysed = [_analyse(client, ex, sink) for ex in exchanges]
    ids: list[int] = []
    new_units: list[int] = []
    with repo.begin() as conn:
        for ex, (reflection, results) in zip(exchanges, analysed, strict=True):
            ts = ex.occurred_at
            data = reflection.value if reflection.ok else dict(DEFAULT_REFLECTION)
            unit_id = repo.save_episode(
                ex.input_text,
                ex.reply_text,
                data,
                source="reflection" if reflection.ok else "default",
                occurred_at=ts,
                now=ts,
                conn=conn,
            )
            ids.append(unit_id)
            results = _without_expired_loops(results, ts, load_now)
            new_units += [unit_id, *store_extraction(repo, conn, unit_id, ts, results, ts).new_unit_ids]
        index_units(conn, collection, sorted(set(new_units)))
    return ids


def _without_expired_loops(results: dict[str, Any], occurred_at: int, now: int) -> dict[str, Any]:
    """The extraction without the loops whose expiry (counted from the exchange) is already past at `now`:
    the next turn would purge them at once, one by one."""
    found = results["loops"]
    if not found.ok:
        return results
    kept = [
        loop for loop in normalize_loops(found.value) if loop_times(loop.get("due_at"), occurred_at)[1] > now
    ]
    return {**results, "loops": GuardResult(True, {"loops": kept}, raw=found.raw, attempts=found.attempts)}


def ingest_exchange(
    repo: MemoryRepository,
    client: LLMClient,
    exchange: Exchange,
    sink: DebugSink | None = None,
    collection: Collection | None = None,
) -> int:
    """One past exchange through the pipeline (see `ingest_exchanges`)."""
    return ingest_exchanges(repo, client, [exchange], sink, collection)[0]


def load_exchanges(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    exchanges: list[Exchange],
    sink: DebugSink | None = None,
    progress: Progress | None = None,
) -> list[int]:
    """Ingest many exchanges, INGEST_CHUNK at a time; each chunk is committed with its vectors, so a crash
    while loading leaves at most one chunk to the index reconciliation. `progress(done, total)` after each."""
    ids: list[int] = []
    for start in range(0, len(exchanges), INGEST_CHUNK):
        ids += ingest_exchanges(repo, client, exchanges[start : start + INGEST_CHUNK], sink, collection)
        if progress is not None:
            progress(len(ids), len(exchanges))
    return ids


def load_sample_memories(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    now: int | None = None,
    sink: DebugSink | None = None,
    count: int = SAMPLE_EPISODES,
    progress: Progress | None = None,
) -> list[int]:
    """The seeded conversation (about 200 episodes up to `now`) through the pipeline with `client`;
    exchanges already in the store are skipped (idempotent per item)."""
    now = repo.now() if now is None else now
    missing = missing_exchanges(repo, generate_conversation(now, count))
    return load_exchanges(repo, collection, client, missing, sink, progress)


def missing_exchanges(repo: MemoryRepository, exchanges: list[Exchange]) -> list[Exchange]:
    """The exchanges not yet in the person's store, by their texts (which do not depend on `now`).

    The same pair of texts can occur more than once in the sample: its n-th occurrence counts as
    present when the store holds at least n episodes with those texts. Only the episodes of
    `repo.owner_id` count: another person's copy of the sample is theirs.
    """
    with repo.connect() as conn:
        rows = conn.execute(
            select(payload_episode.c.input_text, payload_episode.c.reply_text)
            .join(units, units.c.id == payload_episode.c.unit_id)
            .where(
                payload_episode.c.input_text.in_({ex.input_text for ex in exchanges}),
                mine(repo.owner_id),
            )
        ).all()
    stored = Counter((r.input_text, r.reply_text) for r in rows)
    missing = []
    for ex in exchanges:
        key = (ex.input_text, ex.reply_text)
        if stored[key] > 0:
            stored[key] -= 1
        else:
            missing.append(ex)
    return missing


def load_demo_samples(
    repo: MemoryRepository,
    collection: Collection | None,
    sink: DebugSink | None = None,
    progress: Progress | None = None,
) -> int:
    """The one-click 「サンプル記憶を読み込む」: the sample conversation, always through the offline demo model
    (its replies and extractions are scripted); only the exchanges not yet stored are added (a load cut
    short by a crash is completed, never doubled). Returns how many episodes were added."""
    client = DemoClient(personas={FLOW: memory_persona})
    return len(load_sample_memories(repo, collection, client, sink=sink, progress=progress))


def samples_loaded(repo: MemoryRepository) -> bool:
    """Whether every exchange of the sample conversation is in the person's store."""
    return not missing_exchanges(repo, generate_conversation(0))
