"""PDF -> paragraphs with pypdf, bounded: pages, decoded stream bytes, characters (spec 00).

Encrypted PDFs open with an empty user password (owner-password "restrictions only" files, AES
included: needs `cryptography`), or with the password the person typed on the knowledge page.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from pypdf import PageObject, PdfReader
from pypdf.errors import FileNotDecryptedError, LimitReachedError, PdfReadError

from core.documents.bounds import page_content_bytes, pdf_decoding_bounds
from core.documents.document import (
    AttachmentError,
    AttachmentLimits,
    ExtractedDocument,
    Progress,
    lines_to_paragraphs,
)

T = TypeVar("T")


def extract_pdf(
    filename: str, data: bytes, limits: AttachmentLimits, password: str | None, progress: Progress | None
) -> ExtractedDocument:
    with pdf_decoding_bounds(limits.max_pdf_stream_each):
        reader = _open_pdf(filename, data, password, limits.max_pdf_stream_each)
        pages = len(reader.pages)
        if pages > limits.max_pages:
            raise AttachmentError("too_many_pages", filename, pages=pages, limit=limits.max_pages)
        paragraphs, empty_pages = _pdf_paragraphs(filename, reader, limits, progress)
    warnings = []
    if empty_pages:
        shown = "、".join(str(n) for n in empty_pages[:10]) + ("…" if len(empty_pages) > 10 else "")
        warnings.append(
            f"文字を取り出せないページがあります（{shown} ページ目）。画像のみのページは読み取れません。"
        )
    return ExtractedDocument(filename, "pdf", paragraphs, page_count=pages, warnings=warnings)


def _decrypt(filename: str, reader: PdfReader, password: str | None) -> None:
    """Open an encrypted PDF: an empty user password first (restrictions only), then the one given."""
    try:
        if reader.decrypt(""):
            return
        if not password:
            raise AttachmentError("pdf_password", filename)
        if not reader.decrypt(password):
            raise AttachmentError("wrong_password", filename)
    except (FileNotDecryptedError, NotImplementedError) as exc:
        raise AttachmentError("encrypted", filename) from exc


def _open_pdf(filename: str, data: bytes, password: str | None, stream_limit: int) -> PdfReader:
    """A readable PDF with at least one page (decrypted with an empty or the given user password)."""
    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise AttachmentError("corrupt", filename, kind="PDF")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns loudly on minor defects
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            _decrypt(filename, reader, password)
        pages = len(reader.pages)
    except AttachmentError:
        raise
    except FileNotDecryptedError as exc:
        raise AttachmentError("pdf_password", filename) from exc
    except LimitReachedError as exc:
        raise AttachmentError("stream_too_large", filename, size=stream_limit, limit=stream_limit) from exc
    except (PdfReadError, Exception) as exc:  # pypdf raises many types on broken files; re-raised typed
        raise AttachmentError("corrupt", filename, kind="PDF") from exc
    if pages == 0:
        raise AttachmentError("corrupt", filename, kind="PDF")
    return reader


def _typed(filename: str, limits: AttachmentLimits, read: Callable[[], T]) -> T:
    """Run a pypdf read; its decoding limit and any broken-stream error become AttachmentErrors."""
    try:
        return read()
    except AttachmentError:
        raise
    except LimitReachedError as exc:
        each = limits.max_pdf_stream_each
        raise AttachmentError("stream_too_large", filename, size=each, limit=each) from exc
    except MemoryError:
        raise
    except Exception as exc:  # a broken page stream; re-raised typed
        raise AttachmentError("corrupt", filename, kind="PDF") from exc


def _text_of(page: PageObject) -> str:
    return page.extract_text() or ""


def _check_decoded_size(filename: str, reader: PdfReader, limits: AttachmentLimits) -> None:
    """Every page's decoded content bytes, added up before any text is extracted (shared streams count per page)."""
    decoded = 0
    for page in reader.pages:
        decoded += _typed(filename, limits, partial(page_content_bytes, page))
        if decoded > limits.max_pdf_stream_bytes:
            raise AttachmentError(
                "stream_too_large", filename, size=decoded, limit=limits.max_pdf_stream_bytes
            )


def _pdf_paragraphs(
    filename: str, reader: PdfReader, limits: AttachmentLimits, progress: Progress | None
) -> tuple[list[str], list[int]]:
    """Every page's paragraphs, and the numbers of pages without text; too much text or none at all raises."""
    paragraphs: list[str] = []
    empty_pages: list[int] = []
    chars = 0
    total = len(reader.pages)
    _check_decoded_size(filename, reader, limits)
    for number, page in enumerate(reader.pages, start=1):
        text = _typed(filename, limits, partial(_text_of, page))
        lines = lines_to_paragraphs(text)
        if not lines:
            empty_pages.append(number)
        paragraphs.extend(lines)
        chars += sum(len(line) for line in lines)
        if chars > limits.max_chars:
            raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
        if progress is not None:
            progress(number, total)
    if not paragraphs:
        raise AttachmentError("image_only", filename)
    return paragraphs, empty_pages
