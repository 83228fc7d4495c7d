"""Benchmark: what a person waits for in each flow (issue #16 item 4), with a model that takes 1.5 s a call.

The demo model (every flow's persona, core.flows.registry) behind a wrapper that sleeps DELAY seconds before
each call (complete and stream). For each flow, turns 1-12 go through the same core entry points the pages
use, with a real BackgroundWorker, on a temporary data dir. Per turn it prints the model calls on the send
path (started after the send and finished before the input was usable again, on any thread), the seconds
from send to usable, the seconds until the flow's background work had finished, and the background calls.
The next message is sent once the background work is done, so each row measures one turn on its own.

Memory runs twice, with the combined extraction call (the default) and with the spec's three calls, and the
stored entities, facts and loops of the two runs are compared. The flows run side by side (one worker each)
so the whole run takes about two minutes.

Targets: one call on the path, send -> usable <= DELAY + 0.3 s, background done within 10 s.
Run: .venv/bin/python tests/bench/turn_latency.py   (prints tables; no assertions)
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import select

from core.flows import review_chat
from core.flows.chat_item import ChatItem, history, user_item
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.knowledge import demo as kd
from core.flows.knowledge.turn import TurnInput
from core.flows.knowledge.turn import run_turn as knowledge_turn
from core.flows.memory.background import memory_job_key
from core.flows.memory.chat import finish_turn, prepare_turn, stream_reply
from core.flows.memory.constants import EXTRACTION_COMBINED, EXTRACTION_SEPARATE
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.knowledge.interviews import KnowledgeRepository
from core.store.memory.tables import entities, payload_fact, payload_loop

DELAY = 1.5
TURNS = 12
NOW = 1_795_000_000
PATH_TARGET = DELAY + 0.3
BACKGROUND_TARGET = 10.0


@dataclass
class Call:
    step: str
    thread: str
    start: float
    end: float = 0.0


class SlowClient:
    """The demo model, DELAY seconds per call; every call recorded with its thread and times."""

    def __init__(self, inner: LLMClient, delay: float = DELAY):
        self.inner, self.delay = inner, delay
        self.provider, self.model = inner.provider, inner.model
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def _wait(self, request: LLMRequest) -> Call:
        call = Call(request.tags.get("step", ""), threading.current_thread().name, time.monotonic())
        with self._lock:
            self.calls.append(call)
        time.sleep(self.delay)
        return call

    def complete(self, request: LLMRequest) -> LLMReply:
        call = self._wait(request)
        reply = self.inner.complete(request)
        call.end = time.monotonic()
        return reply

    def stream(self, request: LLMRequest) -> TextStream:
        call = self._wait(request)
        stream = self.inner.stream(request)
        call.end = time.monotonic()
        return stream


@dataclass
class Row:
    turn: int
    path: list[str]
    usable: float
    done: float
    background: list[str] = field(default_factory=list)


def measure(
    client: SlowClient, turn: int, send: Callable[[], Any], settle: Callable[[], Any] = lambda: None
) -> Row:
    """Time one turn: send -> usable (send returns), then -> background finished (settle returns)."""
    first = len(client.calls)
    t0 = time.monotonic()
    send()
    t1 = time.monotonic()
    settle()
    t2 = time.monotonic()
    calls = client.calls[first:]
    path = [c.step for c in calls if c.end and c.end <= t1]
    later = [c.step for c in calls if not (c.end and c.end <= t1)]
    return Row(turn, path, t1 - t0, t2 - t0, later)


def knowledge(tmp: Path) -> list[Row]:
    client = SlowClient(demo_client())
    repo = KnowledgeRepository(open_store(tmp), owner_id=LOCAL_PERSON.id)
    items: list[ChatItem] = []
    texts = [kd.DEMO_OPENING, *kd.DEMO_SCRIPT]
    texts += [f"補足{i}: 相手方との交渉経過もメモしておきたいです。" for i in range(TURNS - len(texts))]
    state: dict[str, Any] = {"id": None}
    rows = []
    for turn, text in enumerate(texts[:TURNS], 1):

        def send(text: str = text) -> None:
            outcome = knowledge_turn(
                items, TurnInput(text), interview_id=state["id"], client=client, repo=repo
            )
            state["id"] = outcome.interview_id

        rows.append(measure(client, turn, send))
    return rows


REVIEW_QUESTIONS = [
    "§11 の論述について、講評ではどう評価されていますか？",
    "理由をもう少し詳しく",
    "採点実感ではどう書かれていますか？",
    "この段落の書き方はどうですか？",
    "出題趣旨との関係は？",
    "§20 は何が問題ですか？",
    "では、どう直せばよいですか？",
    "§5 の当てはめは十分ですか？",
    "規範の立て方は？",
    "結論の書き方は？",
    "全体の構成について一言",
    "次に何を練習すればよいですか？",
]


def review(tmp: Path) -> list[Row]:
    client, worker = SlowClient(demo_client()), BackgroundWorker(threads=2)
    repo = review_chat.repository(open_store(tmp), LOCAL_PERSON)
    record = review_chat.get_review(repo, review_chat.sample_review_id(repo))
    assert record is not None
    chat: list[ChatItem] = []
    state: dict[str, Any] = {"thread": None}
    rows = []
    for turn, text in enumerate(REVIEW_QUESTIONS[:TURNS], 1):

        def send(text: str = text) -> None:  # what pages/ui/review/session.py does
            chat.append(user_item(text))
            plan = review_chat.prepare_turn(repo, record, state["thread"], history(chat), text, worker=worker)
            stream = review_chat.stream_reply(client, plan)
            "".join(stream)
            result = review_chat.finish_turn(repo, client, plan, stream.result, worker=worker)
            chat[-1:] = result.items
            state["thread"] = result.thread_id

        def settle() -> None:
            worker.wait(review_chat.summary_job_key(state["thread"], LOCAL_PERSON.id), timeout=60)

        rows.append(measure(client, turn, send, settle))
    worker.close()
    return rows


MEMORY_INPUTS = [
    "同僚の田中さんと新宿でラーメンを食べた。ラーメンが大好き。来週また行く約束をした。",
    "最近ミステリー小説にはまっていて、寝る前に読書するのが楽しい。",
    "明日は朝から会議で少し緊張している。",
    "田中さんが転職するらしくて、ちょっと寂しい。",
    "週末は鎌倉で海を見てきた。カレーが美味しかった。",
    "コーヒーは好きだけど納豆は苦手。",
    "来月の締切が心配。次回その話を聞いてほしい。",
    "妹の佐藤さんが遊びに来た。京都のお土産をくれた。",
    "今日は疲れたので早めに寝る。",
    "田中さんとのラーメンの約束、来週の金曜になった。",
    "読書会に参加してみたい。",
    "今日はありがとう。また話そうね。",
]


def memory(tmp: Path, mode: str) -> tuple[list[Row], list[Any]]:
    client, worker = SlowClient(demo_client()), BackgroundWorker(threads=2)
    clock = {"now": NOW}
    repo = memory_repository(open_store(tmp), LOCAL_PERSON, lambda: clock["now"])
    collection = memory_collection(open_chroma(tmp), LOCAL_PERSON)
    chat: list[dict[str, Any]] = []
    rows = []
    for turn, text in enumerate(MEMORY_INPUTS[:TURNS], 1):
        clock["now"] = NOW + 600 * turn

        def send(text: str = text) -> None:  # what pages/ui/memory/chat.py does
            prepared = prepare_turn(repo, collection, history(chat), text)
            reply = stream_reply(client, prepared)
            "".join(reply)
            outcome = finish_turn(repo, collection, client, prepared, reply, worker=worker, extraction=mode)
            chat.extend(
                [
                    {"role": "user", "content": text, "status": "done"},
                    {"role": "assistant", "content": outcome.reply_text, "status": "done"},
                ]
            )

        rows.append(
            measure(client, turn, send, lambda: worker.wait(memory_job_key(LOCAL_PERSON.id), timeout=120))
        )
    worker.close()
    with repo.connect() as conn:
        stored = [
            sorted(tuple(r) for r in conn.execute(select(entities.c.type_label, entities.c.name))),
            sorted(
                tuple(r) for r in conn.execute(select(payload_fact.c.predicate, payload_fact.c.object_text))
            ),
            sorted(tuple(r) for r in conn.execute(select(payload_loop.c.loop_text, payload_loop.c.due_at))),
        ]
    return rows, stored


def diagnosis(tmp: Path) -> list[Row]:
    client, worker = SlowClient(demo_client()), BackgroundWorker(threads=2)
    rag = RAGService(open_chroma(tmp))
    rag.index_manuals()
    deps = open_deps(client, open_store(tmp), LOCAL_PERSON, rag=rag, worker=worker)
    service = ChatService()
    state: dict[str, Any] = {"session": None, "request": None}
    rows = []
    for turn in range(1, TURNS + 1):
        request = state["request"] or ChatRequest(action="select_vehicle", action_value="minato-soleil-2022")
        if state["request"] is None and state["session"] is not None:
            state["session"] = service.restart(
                state["session"], LOCAL_PERSON.id
            ).session_id  # 最初からやり直す

        def send(request: ChatRequest = request) -> None:  # what pages/ui/diagnosis/session.py does
            request.session_id = state["session"]
            session, response = run_turn(service, request, deps)
            state["session"], prompt = session.session_id, response.prompt
            if session.current_step == ChatStep.PHOTO_CONFIRM:
                state["request"] = ChatRequest(action="photo_confirm", action_value="yes")
            elif prompt.type == "text":
                state["request"] = ChatRequest(message="走行中にハンドルが少し振動する")
            elif prompt.action == "choice":
                state["request"] = ChatRequest(action="choice", action_value="dont_know")
            else:  # the interview ended (reservation, done): the next turn starts over
                state["request"] = None

        rows.append(measure(client, turn, send))
    worker.close()
    return rows


def table(name: str, rows: list[Row]) -> None:
    print(f"\n## {name}")
    print(f"{'turn':>4}  {'path calls':<34} {'send→usable s':>13} {'→bg done s':>10}  background calls")
    for r in rows:
        path = f"{len(r.path)} ({', '.join(r.path)})" if r.path else "0"
        bg = f"{len(r.background)} ({', '.join(r.background)})" if r.background else "-"
        print(f"{r.turn:>4}  {path:<34} {r.usable:>13.2f} {r.done:>10.2f}  {bg}")
    model_turns = [r for r in rows if r.path]
    one = sum(len(r.path) == 1 for r in model_turns)
    fast = sum(r.usable <= PATH_TARGET for r in model_turns)
    bg_ok = sum(r.done <= BACKGROUND_TARGET for r in rows)
    print(
        f"turns with a model call: {len(model_turns)}; one call on the path: {one}; "
        f"usable within {PATH_TARGET:.1f} s: {fast}; background done within {BACKGROUND_TARGET:.0f} s: "
        f"{bg_ok}/{len(rows)}; background calls in all: {sum(len(r.background) for r in rows)}, "
        f"{sum(r.done - r.usable for r in rows):.1f} s"
    )


def main() -> None:
    start = time.monotonic()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {
            "knowledge (spec 00 + 01)": lambda: knowledge(Path(tmp, "k")),
            "review chat (spec 02)": lambda: review(Path(tmp, "r")),
            "companion memory, combined extraction (default)": lambda: memory(
                Path(tmp, "mc"), EXTRACTION_COMBINED
            ),
            "companion memory, three extraction calls (spec)": lambda: memory(
                Path(tmp, "ms"), EXTRACTION_SEPARATE
            ),
            "vehicle diagnosis (spec 04)": lambda: diagnosis(Path(tmp, "d")),
        }

        def run(name: str, job: Callable[[], Any]) -> None:
            results[name] = job()

        threads = [threading.Thread(target=run, args=item, name=item[0]) for item in jobs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    print(f"# Turn latency with a {DELAY} s/call model (demo personas), {TURNS} turns per flow")
    for name in jobs:
        value = results[name]
        table(name, value[0] if isinstance(value, tuple) else value)
    combined = results["companion memory, combined extraction (default)"][1]
    separate = results["companion memory, three extraction calls (spec)"][1]
    print(
        "\nmemory extraction, combined vs three calls: stored entities / facts / loops equal: "
        f"{combined == separate} ({len(combined[0])} entities, {len(combined[1])} facts, {len(combined[2])} loops)"
    )
    print(f"total wall time {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
