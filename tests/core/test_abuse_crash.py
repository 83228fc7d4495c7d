"""Kill-and-restart (issue #15 item 6): SIGKILL during each flow's saves, then a restart.

tests/abuse/crash_worker.py saves through a flow in a loop and prints what the person saw as saved;
the process is killed at a random moment. After the restart: `PRAGMA integrity_check` is ok, every
printed item is in the store, and reconciliation leaves the database and Chroma in agreement.
The worker acts as a signed-in person (issue #14): memory is that person's units and Chroma collection.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text

from core.flows.diagnosis.rag import RAGService
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.sample_data import SAMPLE_EPISODES, load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.tables import KIND_EPISODE, units
from core.store.review.repository import review_messages
from tests.persons import ALICE

PERSON = ALICE  # crash_worker's default person ("alice")

ROOT = Path(__file__).resolve().parents[2]


def kill_during(flow: str, data_dir: Path, *, saves: int = 2, after: float = 0.0) -> list[dict[str, Any]]:
    """Run the crash worker until it printed `saves` lines (or `after` seconds passed), wait a random
    moment, SIGKILL it; every line it printed before dying."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.abuse.crash_worker", flow, str(data_dir)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[dict[str, Any]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    while len(lines) < saves and time.monotonic() - started < max(after, 60):
        if after and time.monotonic() - started >= after:
            break
        time.sleep(0.02)
    time.sleep(random.uniform(0.0, 0.4))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join(timeout=5)
    return lines


def integrity_ok(data_dir: Path) -> Any:
    engine = open_store(data_dir)  # the restart: init_db and every upgrade run again
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    return engine


def test_knowledge_turns_survive_a_kill(tmp_path: Path) -> None:
    shown = kill_during("knowledge", tmp_path, saves=3)
    assert shown
    repo = knowledge_stores(integrity_ok(tmp_path), PERSON).interviews
    for line in shown:  # every turn whose reply the person saw is stored, with its reply
        answered = [t for t in repo.interview_turns(line["interview"]) if t["turn"] is not None]
        assert len(answered) >= line["turns"]


def test_review_messages_survive_a_kill(tmp_path: Path) -> None:
    shown = kill_during("review", tmp_path, saves=3)
    assert shown
    engine = integrity_ok(tmp_path)
    with engine.connect() as conn:
        for line in shown:
            questions = conn.execute(
                select(func.count())
                .select_from(review_messages)
                .where(review_messages.c.thread_id == line["thread"], review_messages.c.role == "user")
            ).scalar()
            assert questions >= line["questions"]


def _vectors_match_units(data_dir: Path) -> tuple[int, int]:
    engine, chroma = integrity_ok(data_dir), open_chroma(data_dir)
    repo, collection = memory_repository(engine, PERSON), memory_collection(chroma, PERSON)
    reconcile_memory_index(repo, collection)
    again = reconcile_memory_index(repo, collection)
    assert not again.changed, again  # reconciled: nothing left to do
    assert again.units == again.vectors
    with engine.connect() as conn:
        episodes = conn.execute(
            select(func.count())
            .select_from(units)
            .where(units.c.kind == KIND_EPISODE, units.c.owner_id == PERSON.id)
        ).scalar()
    return int(episodes or 0), again.vectors


def test_memory_turns_survive_a_kill_and_vectors_are_reconciled(tmp_path: Path) -> None:
    shown = kill_during("memory", tmp_path, saves=3)
    assert shown
    _vectors_match_units(tmp_path)
    engine = open_store(tmp_path)
    with engine.connect() as conn:
        ids = set(
            conn.execute(
                select(units.c.id).where(units.c.kind == KIND_EPISODE, units.c.owner_id == PERSON.id)
            ).scalars()
        )
    assert {line["episode"] for line in shown} <= ids


def test_sample_loading_cut_short_is_completed_not_doubled(tmp_path: Path) -> None:
    # the samples load in chunks of 50 exchanges, one line per committed chunk: killed after the first
    lines = kill_during("memory_samples", tmp_path, saves=1)
    assert lines and lines[0]["loaded"] < SAMPLE_EPISODES
    episodes, _ = _vectors_match_units(tmp_path)
    assert episodes < SAMPLE_EPISODES  # the kill came before the end
    engine, chroma = open_store(tmp_path), open_chroma(tmp_path)
    repo, collection = memory_repository(engine, PERSON), memory_collection(chroma, PERSON)
    assert load_demo_samples(repo, collection) == SAMPLE_EPISODES - episodes
    assert load_demo_samples(repo, collection) == 0
    episodes, _ = _vectors_match_units(tmp_path)
    assert episodes == SAMPLE_EPISODES


def test_manual_index_cut_short_is_reconciled(tmp_path: Path) -> None:
    kill_during("diagnosis_index", tmp_path, saves=1)
    rag = RAGService(open_chroma(tmp_path))
    rag.reconcile()
    assert rag.is_indexed() and rag.reconcile() == (0, 0)


@pytest.mark.parametrize("extra", ["999999"])
def test_vectors_without_units_are_removed(tmp_path: Path, extra: str) -> None:
    engine, chroma = open_store(tmp_path), open_chroma(tmp_path)
    repo, collection = memory_repository(engine, PERSON), memory_collection(chroma, PERSON)
    collection.upsert(
        ids=[extra], documents=["消えた記憶"], metadatas=[{"kind": "EPISODE", "occurred_at": 0}]
    )
    report = reconcile_memory_index(repo, collection)
    assert report.removed == [extra] and collection.count() == 0
    assert "1 件を削除" in report.describe()
