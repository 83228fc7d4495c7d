"""Attachment text extraction: PDF / DOCX / TXT / MD -> paragraphs, in memory, with limits (spec 00 添付ファイル処理).

Files are read from bytes in memory and never written anywhere. Every failure is an
`AttachmentError` with a `code` and a Japanese message a staff member can act on. The limits bound what
a file expands to, not only its size: a DOCX's zip directory and XML parts are checked
before python-docx parses them, and pypdf's decoding is bounded per stream and per file
(core.documents.bounds). Pages run this in a subprocess with a time and memory budget
(core.documents.extract), never in the app process.
"""

from __future__ import annotations

from pathlib import PurePath

from core.documents.document import (
    DEFAULT_LIMITS,
    ERROR_MESSAGES,
    MAX_FILE_BYTES,
    MAX_PDF_PAGES,
    MAX_TEXT_CHARS,
    SUPPORTED_EXTENSIONS,
    TEXT_ENCODINGS,
    AttachmentError,
    AttachmentLimits,
    ExtractedDocument,
    Progress,
    lines_to_paragraphs,
)
from core.documents.docx_reader import extract_docx
from core.documents.pdf_reader import extract_pdf

__all__ = [
    "DEFAULT_LIMITS",
    "ERROR_MESSAGES",
    "MAX_FILE_BYTES",
    "MAX_PDF_PAGES",
    "MAX_TEXT_CHARS",
    "SUPPORTED_EXTENSIONS",
    "AttachmentError",
    "AttachmentLimits",
    "ExtractedDocument",
    "attachment_name",
    "extract_text_from_document",
]


def _decode_text(filename: str, data: bytes) -> tuple[str, str]:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16"), "utf-16"
    if b"\x00" in data:
        raise AttachmentError("encoding", filename)
    for encoding in TEXT_ENCODINGS:
        try:
            return data.decode(encoding), "utf-8" if encoding == "utf-8-sig" else encoding
        except UnicodeDecodeError:
            continue
    raise AttachmentError("encoding", filename)


def _extract_text_file(filename: str, kind: str, data: bytes, limits: AttachmentLimits) -> ExtractedDocument:
    text, encoding = _decode_text(filename, data)
    paragraphs = lines_to_paragraphs(text)
    if not paragraphs:
        raise AttachmentError("empty", filename)
    chars = sum(len(p) for p in paragraphs)
    if chars > limits.max_chars:
        raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
    warnings = [f"文字コード {encoding} として読み取りました。"] if encoding not in ("utf-8",) else []
    return ExtractedDocument(filename, kind, paragraphs, warnings=warnings, encoding=encoding)


def attachment_name(filename: str) -> str:
    """The file name without any path parts (what every message and summary shows)."""
    return PurePath(filename or "").name or "（名前なし）"


def extract_text_from_document(
    filename: str,
    data: bytes,
    *,
    limits: AttachmentLimits = DEFAULT_LIMITS,
    password: str | None = None,
    progress: Progress | None = None,
) -> ExtractedDocument:
    """Extract paragraphs from a PDF, DOCX, TXT or MD file held in memory (spec 00 添付ファイル処理).

    Raises AttachmentError (code + Japanese message) for unsupported, empty, over-limit (size, what
    it expands to, pages, characters), encrypted, corrupt and image-only files. `password` opens a
    PDF with a user password; `progress(done, total)` is called after each PDF page. Nothing is
    written to disk. This runs in the calling process: pages use core.documents.extract (a subprocess with
    a time and memory budget) instead.
    """
    name = attachment_name(filename)
    kind = PurePath(name).suffix.lower().lstrip(".")
    if kind == "doc":
        raise AttachmentError("legacy_doc", name)
    if kind not in SUPPORTED_EXTENSIONS:
        raise AttachmentError("unsupported", name)
    if not data:
        raise AttachmentError("empty", name)
    if len(data) > limits.max_bytes:
        raise AttachmentError("too_large", name, size=len(data), limit=limits.max_bytes)
    if kind == "pdf":
        return extract_pdf(name, data, limits, password, progress)
    if kind == "docx":
        return extract_docx(name, data, limits)
    return _extract_text_file(name, kind, data, limits)
