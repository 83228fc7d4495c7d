"""Bounded extraction (issue #15 item 1): bombs generated here are refused fast, in the worker, in Japanese."""

from __future__ import annotations

import io
import resource
import time
import zipfile

import docx
import pytest
from pypdf import PdfReader, PdfWriter

from core.documents import extract as extraction
from core.documents.attachments import AttachmentError, AttachmentLimits, extract_text_from_document
from core.documents.extract import ExtractionCache, WorkerBudget, extract_in_worker, extract_once
from core.samples.knowledge.build_samples import build_pdf
from tests.abuse.bombs import bomb_docx, bomb_pdf, many_elements_docx, whitespace_docx

RELAXED = AttachmentLimits(max_uncompressed=1 << 40, max_ratio=1 << 30)


def refused(filename: str, data: bytes, **kw) -> AttachmentError:
    with pytest.raises(AttachmentError) as info:
        extract_in_worker(filename, data, **kw)
    error = info.value
    assert error.filename in error.message and any("\u3040" <= ch <= "\u30ff" for ch in error.message)
    return error


@pytest.mark.parametrize(
    ("make", "code"), [(bomb_docx, "expands_too_large"), (whitespace_docx, "expands_too_large")]
)
def test_issue_bombs_refused_in_under_two_seconds(make, code):
    data = make()  # 3 MB / 1 MB on disk, 1 GB inside (the issue's files)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    assert refused("bomb.docx", data).code == code
    assert time.monotonic() - started < 2.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300 * 1024  # KB


def test_compression_ratio_and_element_count():
    data = many_elements_docx()
    assert refused("elements.docx", data).code == "compression_ratio"
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document("elements.docx", data, limits=RELAXED)
    assert info.value.code == "too_many_elements"


def test_one_long_text_node_and_all_text():
    data = whitespace_docx(8 << 20)
    limits = AttachmentLimits(max_ratio=1 << 30, max_xml_text_node=1_000_000)
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document("spaces.docx", data, limits=limits)
    assert info.value.code == "text_node_too_long"
    limits = AttachmentLimits(max_ratio=1 << 30, max_xml_text_node=1 << 30, max_xml_text_total=1_000_000)
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document("spaces.docx", data, limits=limits)
    assert info.value.code == "xml_text_too_long"


def test_doctype_is_refused():
    buf = io.BytesIO()
    docx.Document().save(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"?>", b'?><!DOCTYPE w [<!ENTITY a "aaaa">]>', 1)
            target.writestr(info, data)
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document("dtd.docx", out.getvalue())
    assert info.value.code == "unsafe_xml"


def test_pdf_stream_bomb():
    assert refused("bomb.pdf", bomb_pdf()).code == "stream_too_large"
    limits = AttachmentLimits(max_pdf_stream_bytes=20 << 20)  # each page shares one 12 MB stream
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document("shared.pdf", bomb_pdf(12 << 20, pages=3), limits=limits)
    assert info.value.code == "stream_too_large"


def test_time_budget_ends_a_slow_file():
    started = time.monotonic()
    error = refused("slow.pdf", bomb_pdf(12 << 20, pages=5), budget=WorkerBudget(seconds=1.0))
    assert error.code == "timeout" and "1 秒" in error.message
    assert time.monotonic() - started < 3.0


def test_memory_limit_in_the_child_not_the_app():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    unbounded = AttachmentLimits(
        max_uncompressed=1 << 40, max_ratio=1 << 30, max_xml_text_node=1 << 40, max_xml_text_total=1 << 40
    )
    budget = WorkerBudget(seconds=20, memory_bytes=300 << 20)
    error = refused("big.docx", whitespace_docx(400 << 20), limits=unbounded, budget=budget)
    assert error.code in ("memory", "worker_failed")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024


def test_cancel_from_the_tick():
    started = time.monotonic()
    error = refused("slow.pdf", bomb_pdf(12 << 20, pages=5), on_tick=lambda tick: tick.elapsed < 0.3)
    assert error.code == "cancelled" and time.monotonic() - started < 2.0


def test_progress_reports_pages():
    ticks = []
    extract_in_worker("long.pdf", build_pdf([f"第{i}条" for i in range(1, 200)]), on_tick=ticks.append)
    assert ticks and ticks[-1].total >= 2


def test_extracted_once_per_content(monkeypatch):
    calls = []
    real = extraction.extract_in_worker

    def counting(*args, **kw):
        calls.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(extraction, "extract_in_worker", counting)
    cache = ExtractionCache()
    pdf = build_pdf(["第1条（目的）"])
    assert extract_once(cache, "a.pdf", pdf).filename == "a.pdf"
    assert extract_once(cache, "renamed.pdf", pdf).filename == "renamed.pdf"
    for _ in range(2):  # a refused file is not read again either
        with pytest.raises(AttachmentError):
            extract_once(cache, "bomb.docx", bomb_docx(256 << 20))
    assert calls == ["a.pdf", "bomb.docx"]


def test_cache_is_bounded():
    cache = ExtractionCache(max_entries=2)
    for n in range(4):
        cache.put(str(n), AttachmentError("empty", f"{n}.txt"))
    assert len(cache) == 2 and cache.get("0", "x") is None and cache.get("3", "y").filename == "y"
    cache.put("c", AttachmentError("cancelled", "c.pdf"))
    assert cache.get("c", "c.pdf") is None


def test_child_gets_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    assert "sk-secret-value" not in repr(extraction._child_env())


def _aes(pdf: bytes, user_password: str) -> bytes:
    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(pdf)).pages:
        writer.add_page(page)
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-256")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_aes_pdfs_open_or_ask_for_the_password():
    pdf = build_pdf(["第1条（目的）"])
    assert extract_in_worker("owner.pdf", _aes(pdf, "")).paragraphs == ["第1条（目的）"]
    locked = _aes(pdf, "pw")
    assert refused("locked.pdf", locked).code == "pdf_password"
    assert refused("locked.pdf", locked, password="nope").code == "wrong_password"
    assert extract_in_worker("locked.pdf", locked, password="pw").paragraphs == ["第1条（目的）"]
