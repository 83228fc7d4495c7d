"""Seeded sample memories (about 200 episodes of Japanese conversation, through the same pipeline)."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.debuglog.events import DebugSink
from core.flows.memory.constants import DAY, FLOW
from core.flows.memory.demo import memory_persona
from core.flows.memory.extraction import DEFAULT_REFLECTION, extract_for_episode, run_reflection
from core.flows.memory.indexing import index_units
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


def ingest_exchange(
    repo: MemoryRepository,
    client: LLMClient,
    exchange: Exchange,
    sink: DebugSink | None = None,
    collection: Collection | None = None,
) -> int:
    """One past exchange through the pipeline: reflection call, save the episode, extraction.
    Times are the exchange's own (loops expire relative to it)."""
    ts = exchange.occurred_at
    reflection = run_reflection(client, exchange.input_text, exchange.reply_text, ts, ts, sink)
    data = reflection.value if reflection.ok else dict(DEFAULT_REFLECTION)
    with repo.begin() as conn:
        unit_id = repo.save_episode(
            exchange.input_text,
            exchange.reply_text,
            data,
            source="reflection" if reflection.ok else "default",
            occurred_at=ts,
            now=ts,
            conn=conn,
        )
        if collection is not None:
            index_units(conn, collection, [unit_id])
    extract_for_episode(repo, collection, client, unit_id, ts, sink)
    return unit_id


def load_exchanges(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    exchanges: list[Exchange],
    sink: DebugSink | None = None,
) -> list[int]:
    """Ingest many exchanges, each indexed (FTS5 + Chroma) as it is saved.

    the vectors used to be added only after the last exchange, so a crash while loading
    left every saved episode without one; now each item is complete on its own.
    """
    with repo.connect() as conn:
        before = conn.execute(select(units.c.id).order_by(units.c.id.desc()).limit(1)).scalar() or 0
    ids = [ingest_exchange(repo, client, ex, sink, collection) for ex in exchanges]
    with repo.begin() as conn:
        new_ids = [
            int(i)
            for i in conn.execute(
                select(units.c.id).where(units.c.id > before, mine(repo.owner_id))
            ).scalars()
        ]
        index_units(conn, collection, new_ids)
    return ids


def load_sample_memories(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    now: int | None = None,
    sink: DebugSink | None = None,
    count: int = SAMPLE_EPISODES,
) -> list[int]:
    """The seeded conversation (about 200 episodes up to `now`) through the pipeline with `client`;
    exchanges already in the store are skipped (idempotent per item, issue #15)."""
    now = repo.now() if now is None else now
    return load_exchanges(
        repo, collection, client, missing_exchanges(repo, generate_conversation(now, count)), sink
    )


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
    repo: MemoryRepository, collection: Collection | None, sink: DebugSink | None = None
) -> int:
    """The one-click 「サンプル記憶を読み込む」: the sample conversation, always through the offline demo model
    (its replies and extractions are scripted); only the exchanges not yet stored are added (a load cut
    short by a crash is completed, never doubled). Returns how many episodes were added."""
    return len(load_sample_memories(repo, collection, DemoClient(personas={FLOW: memory_persona}), sink=sink))


def samples_loaded(repo: MemoryRepository) -> bool:
    """Whether every exchange of the sample conversation is in the person's store."""
    return not missing_exchanges(repo, generate_conversation(0))
