"""A process that saves through one flow in a loop until it is killed (issue #15 item 6, kill-and-restart).

`python -m tests.abuse.crash_worker FLOW DATA_DIR [PERSON]` uses the flow's own turn owner with the
offline demo model on a real SQLite store (and embedded Chroma) under DATA_DIR, acting as PERSON (a key of
PEOPLE: a signed-in colleague by default, so memory uses that person's own Chroma collection; issue #14). After each save returns it
prints one JSON line naming what the person now sees as saved; the test SIGKILLs the process at a
random moment and checks, after a restart, that every printed item is there and the stores agree.
FLOW: knowledge | review | memory | memory_samples | diagnosis_index.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.flows.chat_item import ChatItem, history
from core.flows.diagnosis.rag import RAGService
from core.flows.knowledge.stores import knowledge_stores
from core.flows.knowledge.turn import TurnInput
from core.flows.knowledge.turn import run_turn as knowledge_turn
from core.flows.memory.chat import run_turn as memory_turn
from core.flows.memory.sample_data import load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.flows.review_chat import get_review, repository, sample_review_id
from core.flows.review_chat.chat_turn import run_turn as review_turn
from core.people import LOCAL_PERSON, Person
from core.search.vectors import open_chroma
from core.store import open_store
from tests.persons import ALICE, BOB

PEOPLE = {"alice": ALICE, "bob": BOB, "local": LOCAL_PERSON}

INPUTS = ("同僚の田中さんと新宿でラーメンを食べた", "来週は締切があって不安", "週末は鎌倉に行く予定")


def saved(**what: Any) -> None:
    print(json.dumps(what, ensure_ascii=False), flush=True)


def knowledge(data_dir: Path, person: Person) -> None:
    repo = knowledge_stores(open_store(data_dir), person).interviews
    client, interview = demo_client(), None
    items: list[ChatItem] = []
    for n in range(10_000):
        text = f"相談 {n}: 業務委託契約の再委託条項"
        out = knowledge_turn(items, TurnInput(text), interview_id=interview, client=client, repo=repo)
        interview = out.interview_id
        if out.ok:
            saved(interview=interview, turns=sum(1 for i in items if i["role"] == "user"))
        if len(items) > 20:
            items.clear()
            interview = None


def review(data_dir: Path, person: Person) -> None:
    repo = repository(open_store(data_dir), person)
    review_id = sample_review_id(repo)
    record = get_review(repo, review_id)
    assert record is not None
    client, thread, items = demo_client(), None, []  # type: tuple[Any, int | None, list[Any]]
    for n in range(10_000):
        result = review_turn(repo, client, record, thread, history(items), f"§{n % 12 + 1} の評価は？")
        thread = result.thread_id
        items.extend(result.items)
        if result.ok and result.stored:
            saved(thread=thread, questions=sum(1 for i in items if i["role"] == "user"))
        if len(items) > 30:
            items, thread = [], None


def memory(data_dir: Path, person: Person) -> None:
    engine, chroma = open_store(data_dir), open_chroma(data_dir)
    repo, collection = memory_repository(engine, person), memory_collection(chroma, person)
    client, items = demo_client(), []  # type: tuple[Any, list[dict[str, Any]]]
    for n in range(10_000):
        text = INPUTS[n % len(INPUTS)] + f"（{n}）"
        _prepared, outcome = memory_turn(repo, collection, client, items[-12:], text)
        if outcome.ok:
            items += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply_text}]
            saved(episode=outcome.episode_id)


def memory_samples(data_dir: Path, person: Person) -> None:
    engine, chroma = open_store(data_dir), open_chroma(data_dir)
    added = load_demo_samples(
        memory_repository(engine, person),
        memory_collection(chroma, person),
        progress=lambda done, total: saved(loaded=done, of=total),  # one line per committed chunk
    )
    saved(samples=added)


def diagnosis_index(data_dir: Path, person: Person) -> None:
    del person  # the manuals' index is shared by everyone
    rag = RAGService(open_chroma(data_dir))
    for _ in range(10_000):
        saved(chunks=rag.reindex())


FLOWS = {
    "knowledge": knowledge,
    "review": review,
    "memory": memory,
    "memory_samples": memory_samples,
    "diagnosis_index": diagnosis_index,
}

if __name__ == "__main__":
    FLOWS[sys.argv[1]](Path(sys.argv[2]), PEOPLE[sys.argv[3] if len(sys.argv) > 3 else "alice"])
