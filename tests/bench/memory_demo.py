"""Benchmark of the memory page's one-click demo: loading the sample memories and the first scripted turn,
on a fresh store with the bundled embedder, as the page does it. Also what the demo turns leave behind.

Run: .venv/bin/python tests/bench/memory_demo.py [--without-table]
`--without-table` also times the load with every passage run through the model (no precomputed table), the
way the demo worked before the table (about half a minute on this 2-core machine).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.flows.memory import chat
from core.flows.memory.background import memory_job_key
from core.flows.memory.browse import counts
from core.flows.memory.sample_data import DEMO_TURNS, load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.jobs.worker import BackgroundWorker
from core.people import LOCAL_PERSON
from core.search.embedders import BundledEmbedder
from core.search.vectors import open_chroma
from core.store import open_store

RUNS = 3


def one_setup() -> tuple[float, float, float, dict[str, int]]:
    """(load s, first turn until its reply is on screen s, the turn's background work s, unit counts) on a
    fresh store; the background work (extraction, summaries) runs on a worker as in the app."""
    tmp = Path(tempfile.mkdtemp(prefix="memdemo"))
    repo = memory_repository(open_store(tmp), LOCAL_PERSON)
    collection = memory_collection(open_chroma(tmp), LOCAL_PERSON, BundledEmbedder())
    worker = BackgroundWorker(threads=2)
    start = time.perf_counter()
    load_demo_samples(repo, collection)
    loaded = time.perf_counter()
    chat.run_turn(repo, collection, demo_client(), [], DEMO_TURNS[0], worker=worker)
    replied = time.perf_counter()
    worker.wait(memory_job_key(LOCAL_PERSON.id), timeout=120)
    done = time.perf_counter()
    worker.close()
    return loaded - start, replied - loaded, done - replied, counts(repo)


def demo_turns() -> tuple[dict[str, int], int]:
    """The five demo turns on an empty store: unit counts and how many distinct replies."""
    tmp = Path(tempfile.mkdtemp(prefix="memturns"))
    repo = memory_repository(open_store(tmp), LOCAL_PERSON)
    collection = memory_collection(open_chroma(tmp), LOCAL_PERSON, BundledEmbedder())
    history: list[dict[str, str]] = []
    replies = []
    for text in DEMO_TURNS:
        _, outcome = chat.run_turn(repo, collection, demo_client(), history, text)
        replies.append(outcome.reply_text)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply_text}]
    return counts(repo), len(set(replies))


def main() -> None:
    BundledEmbedder().embed_queries(["準備"])  # load the model once, as a running app already has
    rows = [one_setup() for _ in range(RUNS)]
    load = [r[0] for r in rows]
    turn = [r[1] for r in rows]
    background = [r[2] for r in rows]
    total = [a + b for a, b in zip(load, turn, strict=True)]
    n = rows[-1][3]
    load_avg = os.getloadavg()[0]
    print(
        f"## One-click memory demo (median of {RUNS} fresh stores, bundled embedder; load average {load_avg:.1f})\n"
    )
    print("| step | median s | max s |")
    print("|---|---|---|")
    print(
        f"| load {n.get('EPISODE', 0) - 1} sample episodes | {statistics.median(load):.2f} | {max(load):.2f} |"
    )
    print(f"| first demo turn, until its reply is shown | {statistics.median(turn):.2f} | {max(turn):.2f} |")
    print(f"| **set-up total** (target ≤ 3 s) | **{statistics.median(total):.2f}** | {max(total):.2f} |")
    print(
        f"| the turn's background work after the reply | {statistics.median(background):.2f} | {max(background):.2f} |"
    )
    if "--without-table" in sys.argv:
        with mock.patch("core.search.embedders.passage_table", lambda key: {}):
            slow = one_setup()
        print(f"| load without the precomputed table | {slow[0]:.2f} | |")
    print(f"\nunits after the load and one turn: {dict(sorted(n.items()))}")
    made, distinct = demo_turns()
    print(f"\n## The {len(DEMO_TURNS)} demo turns on an empty store\n")
    print("| facts | loops | entities' episodes | distinct replies |")
    print("|---|---|---|---|")
    print(
        f"| {made.get('FACT', 0)} | {made.get('LOOP', 0)} | {made.get('EPISODE', 0)} | {distinct} / {len(DEMO_TURNS)} |"
    )


if __name__ == "__main__":
    main()
