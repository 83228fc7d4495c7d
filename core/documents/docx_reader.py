"""DOCX -> paragraphs with python-docx, after its zip directory and XML parts passed core.documents.bounds."""

from __future__ import annotations

import io
import zipfile

import docx
from docx.document import Document as DocxDocument
from docx.table import Table

from core.documents.bounds import BoundExceeded, XmlBounds, ZipBounds, check_xml_parts, check_zip_directory
from core.documents.document import (
    OLE_MAGIC,
    AttachmentError,
    AttachmentLimits,
    ExtractedDocument,
    lines_to_paragraphs,
)


def _docx_blocks(document: DocxDocument) -> list[str]:
    """Body paragraphs and table rows in document order; a row is its distinct cell texts joined by ' | '."""
    blocks: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            for row in item.rows:
                cells: list[str] = []
                for cell in row.cells:
                    text = " ".join(lines_to_paragraphs(cell.text))
                    if text and (not cells or cells[-1] != text):  # merged cells repeat their text
                        cells.append(text)
                if cells:
                    blocks.append(" | ".join(cells))
        else:
            blocks.extend(lines_to_paragraphs(item.text))
    return blocks


def _check_docx_expansion(filename: str, data: bytes, limits: AttachmentLimits) -> None:
    """The zip directory and the XML parts, checked before python-docx inflates and parses anything."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            check_zip_directory(
                archive, ZipBounds(limits.max_uncompressed, limits.max_ratio, limits.max_members)
            )
            check_xml_parts(
                archive,
                XmlBounds(limits.max_xml_elements, limits.max_xml_text_node, limits.max_xml_text_total),
            )
    except BoundExceeded as exc:
        raise AttachmentError(exc.code, filename, **exc.details) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError) as exc:
        raise AttachmentError("corrupt", filename, kind="DOCX") from exc


def extract_docx(filename: str, data: bytes, limits: AttachmentLimits) -> ExtractedDocument:
    if data.startswith(OLE_MAGIC):
        raise AttachmentError("encrypted", filename)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise AttachmentError("corrupt", filename, kind="DOCX")
    _check_docx_expansion(filename, data, limits)
    try:
        document = docx.Document(io.BytesIO(data))
        paragraphs = _docx_blocks(document)
    except MemoryError:
        raise
    except Exception as exc:  # python-docx raises KeyError, BadZipFile, lxml errors...; re-raised typed
        raise AttachmentError("corrupt", filename, kind="DOCX") from exc
    if not paragraphs:
        raise AttachmentError("no_text", filename)
    chars = sum(len(p) for p in paragraphs)
    if chars > limits.max_chars:
        raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
    return ExtractedDocument(filename, "docx", paragraphs)
