"""Fault and load suite (issue #15 item 8): attacks as a careful tester would make them, one table.

Each case runs in its own process (so "peak MB" is that case's own peak resident memory, the
extraction subprocess included) and prints one row: case, peak MB, seconds, outcome.

- bombs generated here (tests/abuse/bombs.py): the issue's 3 MB zip-bomb DOCX and 1 MB whitespace DOCX
  (1 GB inside each), a million-element DOCX, a PDF stream bomb, a slow PDF, a file past the memory limit;
- a 2 MB reply in every flow, through its page (AppTest): seconds until the page is idle, what is kept;
- the hostile payload (tests/abuse/hostile.py) in every flow's page: Markdown left live (want 0);
- SIGKILL during each flow's saves, then a restart (tests/core/test_abuse_crash.py's checks);
- 20 concurrent sessions through the four flows' turn owners for 60 s on one store.

Targets (issue #15 "Done means"): bombs refused < 2 s and < 300 MB extra; 2 MB reply idle < 5 s and
< 1 GB; no live Markdown; kills leave nothing the person saw missing. Prints; never asserts.
Run: .venv/bin/python tests/bench/abuse.py [--quick] [--case NAME] [--match TEXT]
(tests/bench/abuse_data.py adds the shared-data, export and upload cases: each <= 3 s with a Japanese message
and < 500 MB.)
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.documents.attachments import AttachmentError, AttachmentLimits  # noqa: E402
from core.documents.extract import WorkerBudget, extract_in_worker  # noqa: E402
from core.flows import review_chat  # noqa: E402
from core.flows.chat_item import ChatItem, history  # noqa: E402
from core.flows.diagnosis.rag import RAGService  # noqa: E402
from core.flows.knowledge.stores import knowledge_stores  # noqa: E402
from core.flows.knowledge.turn import TurnInput  # noqa: E402
from core.flows.knowledge.turn import run_turn as knowledge_turn  # noqa: E402
from core.flows.memory.chat import run_turn as memory_turn  # noqa: E402
from core.flows.memory.stores import memory_collection, memory_repository  # noqa: E402
from core.flows.registry import demo_client  # noqa: E402
from core.jobs.worker import BackgroundWorker  # noqa: E402
from core.llm.base import LLMRequest, TextStream, stream_from_reply  # noqa: E402
from core.people import LOCAL_PERSON, Person  # noqa: E402
from core.search.vectors import open_chroma  # noqa: E402
from core.store import open_store  # noqa: E402
from core.store.memory.tables import units  # noqa: E402
from tests.abuse.bombs import bomb_docx, bomb_pdf, many_elements_docx, whitespace_docx  # noqa: E402
from tests.abuse.hostile import MARK, HostileClient, live_parts  # noqa: E402
from tests.bench.abuse_data import data_cases  # noqa: E402
from tests.core import test_abuse_crash as crash  # noqa: E402
from tests.pages.conftest import make_app  # noqa: E402
from tests.pages.test_abuse_render import rendered  # noqa: E402

BIG = ("ループする返信です。" * 300_000)[:2_000_000]
Outcome = tuple[str, float]  # (outcome, seconds)


def _refusal(make: Callable[[], bytes], name: str, **kw: Any) -> Outcome:
    data = make()
    started = time.monotonic()
    try:
        doc = extract_in_worker(name, data, **kw)
        outcome = f"read: {doc.page_count or '-'} pages, {doc.char_count:,} chars"
    except AttachmentError as exc:
        outcome = f"{exc.code}: {exc.message[:48]}…"
    return f"{len(data) / 1e6:.1f} MB file -> {outcome}", time.monotonic() - started


def attachment_cases() -> dict[str, Callable[[], Outcome]]:

    unbounded = AttachmentLimits(
        max_uncompressed=1 << 40, max_ratio=1 << 30, max_xml_text_node=1 << 40, max_xml_text_total=1 << 40
    )
    return {
        "bomb DOCX (1 GB of XML)": lambda: _refusal(bomb_docx, "bomb.docx"),
        "whitespace DOCX (1 GB text node)": lambda: _refusal(whitespace_docx, "spaces.docx"),
        "3M-element DOCX": lambda: _refusal(many_elements_docx, "elements.docx"),
        "PDF stream bomb (1 GB)": lambda: _refusal(bomb_pdf, "bomb.pdf"),
        "slow PDF (5 x 12 MB pages, 2 s budget)": lambda: _refusal(
            lambda: bomb_pdf(12 << 20, pages=5), "slow.pdf", budget=WorkerBudget(seconds=2.0)
        ),
        "400 MB DOCX past every check (300 MB limit)": lambda: _refusal(
            lambda: whitespace_docx(400 << 20),
            "big.docx",
            limits=unbounded,
            budget=WorkerBudget(seconds=20, memory_bytes=300 << 20),
        ),
    }


def _stuff(value: Any, done: list[bool]) -> Any:
    if isinstance(value, str) and not done[0] and any(ord(ch) > 0x2FFF for ch in value):
        done[0] = True
        return value + BIG
    if isinstance(value, list):
        return [_stuff(v, done) for v in value]
    if isinstance(value, dict):
        return {k: _stuff(v, done) for k, v in value.items()}
    return value


class BigReplyClient:
    """The demo model with 2 MB added to every reply (text in front; the first Japanese JSON string)."""

    def __init__(self) -> None:
        self.inner = demo_client()
        self.provider, self.model = self.inner.provider, "big-reply"

    def complete(self, request: LLMRequest) -> Any:
        reply = self.inner.complete(request)
        if request.json_schema is not None:
            return replace(
                reply, text=json.dumps(_stuff(json.loads(reply.text), [False]), ensure_ascii=False)
            )
        return replace(reply, text=BIG + reply.text)

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request), chunk_chars=4000)


PAGES = {
    "knowledge": "pages/knowledge.py",
    "review": "pages/review_chat.py",
    "memory": "pages/memory.py",
    "diagnosis": "pages/diagnosis.py",
}


def _page_turn(flow: str, client: Any) -> tuple[Any, float]:

    at = make_app(Path(tempfile.mkdtemp()), client=client, page=PAGES[flow])
    started = time.monotonic()
    if flow == "memory":
        at.chat_input(key="memory_input").set_value("同僚の田中さんと新宿でラーメンを食べた").run()
    else:
        at.session_state[f"{flow}_demo_request"] = True
        at.run()
    at.run()  # the page idle again: one more rerun (what the next click costs)
    return at, time.monotonic() - started


def reply_case(flow: str) -> Outcome:
    at, seconds = _page_turn(flow, BigReplyClient())
    items = at.session_state["chat"][flow]
    longest = max((len(i["content"]) for i in items if i["role"] == "assistant"), default=0)
    shown = max((len(m.value) for m in at.markdown), default=0)
    errors = len(at.exception)
    return f"kept {longest:,} chars, largest Markdown {shown:,} chars, {errors} exceptions", seconds


def hostile_case(flow: str) -> Outcome:

    at, seconds = _page_turn(flow, HostileClient())
    shown = rendered(at)
    live = [p for _, text in shown for p in live_parts(text)]
    reached = sum(MARK in text for _, text in shown)
    return f"{reached} renderings carry the payload, live Markdown: {len(live)}", seconds


def kill_case(flow: str) -> Outcome:

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        if flow == "memory_samples":
            crash.kill_during(flow, data, saves=1, after=random.uniform(2.0, 4.0))
            episodes, vectors = crash._vectors_match_units(data)
            return (
                f"killed at {episodes} episodes; reconciled {vectors} vectors = units",
                time.monotonic() - started,
            )
        shown = crash.kill_during(flow, data, saves=3)
        crash.integrity_ok(data)
        if flow == "memory":
            crash._vectors_match_units(data)
        if flow == "diagnosis_index":
            added, removed = RAGService(open_chroma(data)).reconcile()
            return f"index reconciled (+{added} / -{removed})", time.monotonic() - started
        return (
            f"{len(shown)} saves shown before the kill; integrity ok, all present",
            time.monotonic() - started,
        )


def concurrent_case(sessions: int, seconds: float) -> Outcome:
    """`sessions` threads, each one person's session (a signed-in person of their own, issue #14) cycling
    knowledge -> review -> memory turns, on one store, with the app's background worker for memory
    extraction (what the pages do)."""

    tmp = Path(tempfile.mkdtemp())
    engine, chroma = open_store(tmp), open_chroma(tmp)
    shared = review_chat.repository(engine, LOCAL_PERSON)
    record = review_chat.get_review(shared, review_chat.sample_review_id(shared))  # the shared sample
    worker = BackgroundWorker(threads=2)  # as in the app: extraction and summaries in the background
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def person(n: int) -> None:
        me = Person(f"https://idp.example|bench{n}", f"利用者{n}", f"bench{n}@example.com")
        k_repo, r_repo = knowledge_stores(engine, me).interviews, review_chat.repository(engine, me)
        m_repo, collection = memory_repository(engine, me), memory_collection(chroma, me)
        client = demo_client()
        k_items: list[ChatItem] = []
        r_items: list[ChatItem] = []
        m_items: list[dict[str, Any]] = []
        interview, thread = None, None
        turn = 0
        while time.monotonic() < stop:
            turn += 1
            started = time.monotonic()
            flow = ("memory", "knowledge", "review")[turn % 3]
            try:
                if turn % 3 == 1:
                    out = knowledge_turn(
                        k_items,
                        TurnInput(f"{n}: 再委託の条項 {turn}"),
                        interview_id=interview,
                        client=client,
                        repo=k_repo,
                    )
                    interview, ok = out.interview_id, out.ok
                elif turn % 3 == 2:
                    result = review_chat.run_turn(
                        r_repo, client, record, thread, history(r_items), f"§{turn % 12 + 1} は？"
                    )
                    thread, ok = result.thread_id, result.ok
                    r_items.extend(result.items)
                else:
                    text = f"{n}: 田中さんとラーメン {turn}"
                    _p, outcome = memory_turn(m_repo, collection, client, m_items[-12:], text, worker=worker)
                    ok = outcome.ok
                    m_items += [
                        {"role": "user", "content": text},
                        {"role": "assistant", "content": outcome.reply_text},
                    ]
                if not ok:
                    raise RuntimeError("turn not ok")
            except Exception as exc:  # noqa: BLE001 - the bench counts every failure instead of stopping
                with lock:
                    failures.append(f"{flow} {type(exc).__name__}: {exc}"[:300])
            with lock:
                latencies.append(time.monotonic() - started)

    threads = [threading.Thread(target=person, args=(n,)) for n in range(sessions)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    worker.close(timeout=60)
    with engine.connect() as conn:
        states = dict(
            conn.execute(select(units.c.extract_state, func.count()).group_by(units.c.extract_state)).all()
        )
    ordered = sorted(latencies)
    p50 = ordered[len(ordered) // 2] if ordered else 0
    p95 = ordered[int(len(ordered) * 0.95)] if ordered else 0
    kinds = sorted({f.split(":")[0] for f in failures})
    if failures:
        print("failures:", *failures[:5], sep="\n  ", file=sys.stderr)
    return (
        f"{len(latencies)} turns, {len(failures)} failed {kinds[:3]}, p50 {p50:.2f} s, p95 {p95:.2f} s; "
        f"extractions done {states.get('done', 0)}, pending {states.get('pending', 0)}, "
        f"failed {states.get('failed', 0)}",
        time.monotonic() - started,
    )


def cases(quick: bool) -> dict[str, Callable[[], Outcome]]:
    out: dict[str, Callable[[], Outcome]] = {
        "baseline (this script's imports only)": lambda: ("nothing done", 0.0)
    }
    out.update(attachment_cases())
    for flow in PAGES:
        out[f"2 MB reply: {flow}"] = lambda flow=flow: reply_case(flow)
    for flow in PAGES:
        out[f"hostile payload: {flow} page"] = lambda flow=flow: hostile_case(flow)
    for flow in ("knowledge", "review", "memory", "memory_samples", "diagnosis_index"):
        out[f"SIGKILL + restart: {flow}"] = lambda flow=flow: kill_case(flow)
    out["20 sessions x 60 s"] = lambda: concurrent_case(20, 10 if quick else 60)
    out.update(data_cases())  # shared data, exports and uploads (tests/bench/abuse_data.py)
    return out


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def run_one(name: str, quick: bool) -> None:
    try:
        outcome, seconds = cases(quick)[name]()
    except Exception as exc:  # noqa: BLE001 - a crashed case is a row of the table, not a traceback
        outcome, seconds = f"case failed: {type(exc).__name__}: {exc}"[:120], 0.0
    print(json.dumps({"outcome": outcome, "seconds": seconds, "peak_mb": _peak_mb()}, ensure_ascii=False))


def main() -> None:
    quick = "--quick" in sys.argv
    if "--case" in sys.argv:
        run_one(sys.argv[sys.argv.index("--case") + 1], quick)
        return
    print("| case | peak MB | seconds | outcome |\n|---|---:|---:|---|")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    match = sys.argv[sys.argv.index("--match") + 1] if "--match" in sys.argv else ""
    for name in [n for n in cases(quick) if match in n]:
        args = [sys.executable, __file__, "--case", name] + (["--quick"] if quick else [])
        done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        row = (
            json.loads(lines[-1])
            if lines
            else {"outcome": f"exit {done.returncode}", "seconds": 0, "peak_mb": 0}
        )
        print(f"| {name} | {row['peak_mb']:.0f} | {row['seconds']:.2f} | {row['outcome']} |", flush=True)


if __name__ == "__main__":
    main()
