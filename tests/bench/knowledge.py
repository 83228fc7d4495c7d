"""Benchmarks for the knowledge flow: attachment extraction and message building.

Run: `.venv/bin/python tests/bench/knowledge.py`. Prints a table; targets from issue 3:
100-page PDF <= 3 s, message build for a 100-turn history <= 5 ms.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import docx
from pypdf import PdfReader, PdfWriter

from core.documents.attachments import extract_text_from_document
from core.flows.knowledge import demo as kd
from core.flows.knowledge import interview as kf
from core.samples.knowledge.build_samples import build_pdf

LINE = "第{n}条（秘密保持）甲及び乙は、本契約に関して相手方から開示された情報を秘密として保持する。"


def timed(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def pdf_pages(pages: int) -> bytes:
    """A Japanese PDF of exactly `pages` full pages (about 34 lines of 38 characters each)."""
    data = build_pdf([LINE.format(n=i)[:38] for i in range(pages * 40)])
    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(data)).pages[:pages]:
        writer.add_page(page)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def docx_paragraphs(count: int) -> bytes:
    document = docx.Document()
    for i in range(count):
        document.add_paragraph(LINE.format(n=i))
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def history(turns: int) -> list[dict[str, str]]:
    items = []
    for i in range(turns):
        items.append({"role": "user", "content": kf.build_user_payload(f"回答 {i}: " + LINE.format(n=i), [])})
        items.append({"role": "assistant", "content": kf.FEW_SHOT_TURN})
    return items


def main() -> None:
    rows = []
    pdf = pdf_pages(100)
    seconds, doc = timed(lambda: extract_text_from_document("bench.pdf", pdf), 3)
    rows.append(
        (
            "PDF 100ページ 抽出",
            f"{seconds * 1000:.0f} ms",
            "<= 3000 ms",
            f"{doc.page_count} p, {len(doc.paragraphs)} 段落, {len(pdf) // 1024} KB",
        )
    )  # type: ignore[attr-defined]
    data = docx_paragraphs(200)
    seconds, doc = timed(lambda: extract_text_from_document("bench.docx", data), 5)
    rows.append(("DOCX 200段落 抽出", f"{seconds * 1000:.0f} ms", "—", f"{len(doc.paragraphs)} 段落"))  # type: ignore[attr-defined]
    hist = history(100)
    seconds, messages = timed(lambda: kf.build_messages("次の回答です", ["添付"], "SYSTEM", hist), 200)
    rows.append(
        ("メッセージ構築 100ターン履歴", f"{seconds * 1000:.3f} ms", "<= 5 ms", f"{len(messages)} 件")
    )  # type: ignore[arg-type]
    raw = kf.FEW_SHOT_TURN
    seconds, _ = timed(lambda: kf.parse_and_validate_turn(raw, kf.turn_schema(), kf.entry_schema()), 500)
    rows.append(("parse_and_validate_turn", f"{seconds * 1000:.3f} ms", "—", "1ターン"))
    payloads = [m["content"] for m in hist if m["role"] == "user"]
    seconds, _ = timed(lambda: kd.reply_for(payloads), 20)
    rows.append(("デモ人格 100ターン応答", f"{seconds * 1000:.2f} ms", "—", "履歴を毎回再生"))
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'項目':<{width}}{'中央値':>14}  {'目標':<12}備考")
    for name, value, target, note in rows:
        print(f"{name:<{width}}{value:>14}  {target:<12}{note}")


if __name__ == "__main__":
    main()
