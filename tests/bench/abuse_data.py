"""Cases of tests/bench/abuse.py for shared data, exports and uploads: what one person's text or file could do
to a page another person opens. Each returns (outcome, seconds); the outcome quotes the Japanese message shown.
Targets: every case <= 3 s with a Japanese message and < 500 MB; no page shows the generic error."""

from __future__ import annotations

import csv
import io
import json
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import update

from core.debuglog.events import DebugEvent, events_to_csv
from core.flows.knowledge import export as kx
from core.flows.knowledge import interview as kf
from core.flows.review_chat.constants import MAX_ANSWER_CHARS, MAX_ANSWER_PARAGRAPHS, answer_bound_errors
from core.flows.review_chat.records import read_review_file
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON, Person
from core.store import open_store
from core.store.knowledge.entries import KnowledgeBaseRepository, knowledge_entries
from core.store.review.manage import ManagedReviewRepository
from core.text.export import FORMULA_STARTS
from core.workbench.log_import import read_debug_jsonl
from core.workbench.prices import parse_price_table
from tests.core.test_review_messages import REVIEW
from tests.pages.conftest import make_app

Outcome = tuple[str, float]
BASE = {"flow": "review", "step": "reply", "kind": "call", "conversation_id": "1", "turn": 1}
HOSTILE_LINES = {
    'messages: "x"': {**BASE, "messages": "x"},
    "raw: 5": {**BASE, "raw": 5},
    'temperature: "hot"': {**BASE, "temperature": "hot"},
    "errors: [1]": {**BASE, "errors": [1]},
    'turn: "3"': {**BASE, "turn": "3"},
    "ids as lists": {**BASE, "conversation_id": ["a"], "call_id": ["b"]},
    "array line": [1, 2],
    "null line": None,
}


def _timed(run: Callable[[], str]) -> Outcome:
    start = time.perf_counter()
    outcome = run()
    return outcome, time.perf_counter() - start


def _first(errors: list[str]) -> str:
    return errors[0][:70] if errors else "NO MESSAGE"


def kb_tab_case() -> Outcome:
    """The knowledge base tab with an old entry holding U+000B, NUL and ESC, opened by someone else (AppTest)."""
    tmp = Path(tempfile.mkdtemp())
    engine = open_store(tmp)
    entry = {k: "値" for k in kf.KNOWLEDGE_FIELDS}
    entry_id = KnowledgeBaseRepository(engine).save_entry(entry, by=Person("yamada", "山田"))
    with engine.begin() as conn:
        conn.execute(
            update(knowledge_entries)
            .where(knowledge_entries.c.id == entry_id)
            .values(knowledge_title="題\x0b", review_points="\x00\x1b")
        )

    def run() -> str:
        at = make_app(tmp, client=ReplayClient([]), page="pages/knowledge.py")
        kinds = [b.proto.deferred_file_id != "" for b in at.get("download_button")]
        docx_bytes = kx.export_entries(kx.entries_to_docx, KnowledgeBaseRepository(engine).list_entries())
        return f"exception={bool(at.exception)}, {sum(kinds)} exports deferred, DOCX {len(docx_bytes):,} B"

    return _timed(run)


def csv_case() -> Outcome:
    def run() -> str:
        cell = '=HYPERLINK("http://evil.example","x")'
        entries = [{"id": 1, **dict.fromkeys(kf.KNOWLEDGE_FIELDS, cell)}]
        events = [DebugEvent("review", "reply", "call", raw=cell, errors=["+1"], notes=["@x"], fixes=["-2"])]
        texts = [kx.entries_to_csv(entries).decode("utf-8-sig"), events_to_csv(events)]
        cells = [c for text in texts for row in csv.reader(io.StringIO(text)) for c in row]
        return f"formula cells: {sum(c.startswith(FORMULA_STARTS) for c in cells)} of {len(cells)}"

    return _timed(run)


def markdown_case() -> Outcome:
    def run() -> str:
        live = "![x](http://evil.example/a.png) <img src=x> [a](javascript:alert(1))"
        md = kx.entries_to_markdown([dict.fromkeys(kf.KNOWLEDGE_FIELDS, live)])
        parts = sum(md.count(p) for p in ("](", "<img", "javascript:"))
        return f"live parts in the knowledge Markdown: {parts}"

    return _timed(run)


def paste_case(paragraphs: int) -> Outcome:
    text = "\n\n".join(f"第{n}段落の文章です。" * 4 for n in range(paragraphs))

    def run() -> str:
        errors = answer_bound_errors(0, len(text))
        return _first(errors) if errors else "accepted (at the bound)"

    return _timed(run)


def import_case(paragraphs: int) -> Outcome:
    answer = "\n".join(f"$$[{n}] 段落{n}の文章。" for n in range(1, paragraphs + 1))
    raw = json.dumps(
        {"title": "t", "question_text": "q", "answer_text": answer, "review_json": {"overall_review": "o"}}
    )
    return _timed(lambda: f"{len(raw) / 1e6:.1f} MB: " + _first(read_review_file(raw.encode()).errors))


def jsonl_case(line: Any) -> Outcome:
    return _timed(lambda: _first(read_debug_jsonl(json.dumps(line).encode()).errors))


def deep_jsonl_case() -> Outcome:
    data = b"[" * 100_000 + b"]" * 100_000
    return _timed(lambda: _first(read_debug_jsonl(data).errors))


def many_turns_case() -> Outcome:
    line = json.dumps({**BASE, "user_input": "質問です。" * 8}) + "\n"
    data = "".join(line.replace('"turn": 1', f'"turn": {n}') for n in range(1, 136_001)).encode()
    return _timed(lambda: f"{len(data) / 1e6:.0f} MB: " + _first(read_debug_jsonl(data).errors))


def review_file_case(raw: bytes) -> Outcome:
    def run() -> str:
        check = read_review_file(raw)
        return _first(check.errors) if check.errors else f"read, title {check.record.title!r}"  # type: ignore[union-attr]

    return _timed(run)


def price_case(value: str) -> Outcome:
    text = f'[models.m]\ninput = {value}\noutput = 1\ncurrency = "USD"\n'
    return _timed(lambda: _first(parse_price_table(text)[1]))


def bound_answer_text() -> str:
    """An answer of exactly MAX_ANSWER_PARAGRAPHS marked paragraphs and MAX_ANSWER_CHARS characters."""
    lines = [f"$$[{n}] 第{n}段落。" for n in range(1, MAX_ANSWER_PARAGRAPHS + 1)]
    room = MAX_ANSWER_CHARS - sum(len(line) for line in lines) - (len(lines) - 1)  # newlines between
    each, extra = divmod(room, len(lines))
    text = "\n".join(line + "あ" * (each + (n < extra)) for n, line in enumerate(lines))
    assert len(text) == MAX_ANSWER_CHARS
    return text


def review_page_case() -> Outcome:
    """The review chat page with an imported review at the answer's bounds open (AppTest): the time of one page
    run once the review is open (what every later click costs), the first opening beside it."""
    tmp = Path(tempfile.mkdtemp())
    items = [
        {"title": f"項目{n}", "description": "説明", "paragraph_numbers": [n, n + 500]} for n in range(1, 21)
    ]
    raw = json.dumps(
        {
            "title": "上限の答案",
            "question_text": "問題文",
            "answer_text": bound_answer_text(),
            "review_json": {"overall_review": "講評", "weaknesses": items},
        },
        ensure_ascii=False,
    ).encode()
    check = read_review_file(raw)
    assert check.record is not None, check.errors
    engine = open_store(tmp)
    review_id, _ = ManagedReviewRepository(engine, owner_id=LOCAL_PERSON.id).add_own_review(check.record)
    engine.dispose()
    at = make_app(tmp, page="pages/review_chat.py")  # opens on the sample
    started = time.perf_counter()
    at.selectbox(key="review_picker").set_value(review_id).run()
    first = time.perf_counter() - started
    assert at.session_state["review_review_id"] == review_id
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    at.button(key="review_para_7").click().run()  # a § click: §7 goes into the message
    click = time.perf_counter() - started
    assert "§7" in at.text_area(key="review_draft").value
    paras = [b for b in at.button if (b.key or "").startswith("review_para_")]
    return (
        f"{len(raw) / 1e6:.2f} MB review, 1,000 § / 200,000 chars: page run {seconds:.2f} s, § click "
        f"{click:.2f} s (opening it {first:.2f} s), {len(paras)} § buttons drawn, "
        f"exception={bool(at.exception)}",
        seconds,
    )


def concurrent_import_case() -> Outcome:
    engine = open_store(Path(tempfile.mkdtemp()))
    barrier = threading.Barrier(20)
    ids: list[int] = []

    def one() -> None:
        barrier.wait()
        ids.append(ManagedReviewRepository(engine, owner_id="alice").add_own_review(REVIEW)[0])

    def run() -> str:
        workers = [threading.Thread(target=one) for _ in range(20)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return f"20 imports -> {len(set(ids))} row(s)"

    return _timed(run)


def data_cases() -> dict[str, Callable[[], Outcome]]:
    out: dict[str, Callable[[], Outcome]] = {
        "KB tab: old entry with U+000B/NUL/ESC": kb_tab_case,
        "CSV exports: formula cells": csv_case,
        "Markdown export: images/HTML/javascript": markdown_case,
        "paste: 5 MB answer (100k paragraphs)": lambda: paste_case(100_000),
        "paste: answer at the bound": lambda: paste_case(1_000),
        "import: 1 MB review (20k paragraphs)": lambda: import_case(20_000),
        "review chat page: review at the bound (1,000 § / 200k chars)": review_page_case,
        "JSONL: depth-100k nesting": deep_jsonl_case,
        "JSONL: 20 MB, 136k turns": many_turns_case,
        "review file: 4 KB nesting": lambda: review_file_case(b"[" * 4096 + b"]" * 4096),
        "review file: lone surrogate title": lambda: review_file_case(
            b'{"title":"\\ud800","question_text":"q","answer_text":"$$[1] a","review_json":{"overall_review":"o"}}'
        ),
        "20 concurrent imports (SQLite)": concurrent_import_case,
    }
    for name, line in HOSTILE_LINES.items():
        out[f"JSONL: {name}"] = lambda line=line: jsonl_case(line)
    for value in ("nan", "9e999999", "-1", '"hot"'):
        out[f"price {value}"] = lambda value=value: price_case(value)
    return out
