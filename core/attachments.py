"""Attachment text extraction: PDF / DOCX / TXT / MD -> paragraphs, in memory, with limits (spec 00 添付ファイル処理).

Files are read from bytes in memory and never written anywhere. Every failure is an
`AttachmentError` with a `code` and a Japanese message a staff member can act on.
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePath

import docx
from docx.document import Document as DocxDocument
from docx.table import Table
from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from core.textnorm import repair_ideographs

# Limits (named here, in one place).
MAX_FILE_BYTES = 20 * 1024 * 1024  # 20 MB per file
MAX_PDF_PAGES = 300
MAX_TEXT_CHARS = 200_000  # extracted characters per file
SUPPORTED_EXTENSIONS = ("pdf", "docx", "txt", "md")
TEXT_ENCODINGS = ("utf-8-sig", "cp932", "shift_jis")  # utf-8-sig also reads plain UTF-8
# Encrypted Office files (and the legacy .doc format) are OLE compound files, not zips.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

ERROR_MESSAGES = {
    "unsupported": "対応していないファイル形式です（{name}）。PDF・DOCX・TXT・MD のいずれかを添付してください。",
    "legacy_doc": "旧形式の Word ファイル（.doc）は読み取れません（{name}）。Word で DOCX 形式に保存し直してから添付してください。",
    "empty": "ファイルが空です（{name}）。中身のあるファイルを添付してください。",
    "too_large": "ファイルが大きすぎます（{name}: {size}）。上限は {limit} です。必要な部分だけのファイルにしてください。",
    "too_many_pages": "ページ数が多すぎます（{name}: {pages} ページ）。上限は {limit} ページです。必要なページだけのPDFにしてください。",
    "too_many_chars": "本文が長すぎます（{name}: 約 {chars:,} 文字）。上限は {limit:,} 文字です。必要な部分だけのファイルにしてください。",
    "encrypted": "パスワードで保護されたファイルのため読み取れません（{name}）。保護を解除したファイルを添付してください。",
    "corrupt": "ファイルが壊れているか、{kind} として読み取れません（{name}）。元のファイルを開いて保存し直してから添付してください。",
    "image_only": "文字情報のない PDF です（{name}: スキャン画像のみの可能性）。OCR でテキスト化したファイルか、DOCX・TXT を添付してください。",
    "no_text": "ファイルから本文を取り出せませんでした（{name}）。文字が含まれているか確認してください。",
    "encoding": "文字コードを判別できませんでした（{name}）。UTF-8 か Shift_JIS で保存したテキストを添付してください。",
}


class AttachmentError(ValueError):
    """An attachment that cannot be used; `code` is a key of ERROR_MESSAGES, `message` is Japanese."""

    def __init__(self, code: str, filename: str, **details: object):
        self.code = code
        self.filename = filename
        self.message = ERROR_MESSAGES[code].format(name=filename, **details)
        super().__init__(self.message)


@dataclass(frozen=True)
class AttachmentLimits:
    max_bytes: int = MAX_FILE_BYTES
    max_pages: int = MAX_PDF_PAGES
    max_chars: int = MAX_TEXT_CHARS


DEFAULT_LIMITS = AttachmentLimits()


@dataclass
class ExtractedDocument:
    """The text of one attachment as paragraphs (spec 00: 段落化)."""

    filename: str
    kind: str  # pdf | docx | txt | md
    paragraphs: list[str]
    page_count: int | None = None  # PDFs only
    warnings: list[str] = field(default_factory=list)
    encoding: str | None = None  # text files only

    @property
    def text(self) -> str:
        """Paragraphs joined by newlines: what goes into the prompt."""
        return "\n".join(self.paragraphs)

    @property
    def char_count(self) -> int:
        return sum(len(p) for p in self.paragraphs)

    def summary(self) -> dict[str, object]:
        """Name, kind, pages, paragraph and character counts (no text): safe to store and show."""
        return {
            "name": self.filename,
            "kind": self.kind,
            "pages": self.page_count,
            "paragraphs": len(self.paragraphs),
            "chars": self.char_count,
            "warnings": list(self.warnings),
        }


def _human_size(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"


def _lines_to_paragraphs(text: str) -> list[str]:
    """Spec 00: split on line breaks, strip, drop empty lines (PDF radicals repaired: 「⽉額」 -> 「月額」)."""
    text = repair_ideographs(text)
    return [
        line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()
    ]


def _extract_pdf(filename: str, data: bytes, limits: AttachmentLimits) -> ExtractedDocument:
    reader = _open_pdf(filename, data)
    pages = len(reader.pages)
    if pages > limits.max_pages:
        raise AttachmentError("too_many_pages", filename, pages=pages, limit=limits.max_pages)
    paragraphs, empty_pages = _pdf_paragraphs(filename, reader, limits)
    warnings = []
    if empty_pages:
        shown = "、".join(str(n) for n in empty_pages[:10]) + ("…" if len(empty_pages) > 10 else "")
        warnings.append(
            f"文字を取り出せないページがあります（{shown} ページ目）。画像のみのページは読み取れません。"
        )
    return ExtractedDocument(filename, "pdf", paragraphs, page_count=pages, warnings=warnings)


def _open_pdf(filename: str, data: bytes) -> PdfReader:
    """A readable PDF with at least one page (decrypted when the user password is empty)."""
    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise AttachmentError("corrupt", filename, kind="PDF")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns loudly on minor defects
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # Many PDFs are "encrypted" with an empty user password (print/copy restrictions only).
            try:
                if not reader.decrypt(""):
                    raise AttachmentError("encrypted", filename)
            except (FileNotDecryptedError, NotImplementedError) as exc:
                raise AttachmentError("encrypted", filename) from exc
        pages = len(reader.pages)
    except AttachmentError:
        raise
    except FileNotDecryptedError as exc:
        raise AttachmentError("encrypted", filename) from exc
    except (PdfReadError, Exception) as exc:  # pypdf raises many types on broken files; re-raised typed
        raise AttachmentError("corrupt", filename, kind="PDF") from exc
    if pages == 0:
        raise AttachmentError("corrupt", filename, kind="PDF")
    return reader


def _pdf_paragraphs(
    filename: str, reader: PdfReader, limits: AttachmentLimits
) -> tuple[list[str], list[int]]:
    """Every page's paragraphs, and the numbers of pages without text; too much text or none at all raises."""
    paragraphs: list[str] = []
    empty_pages: list[int] = []
    chars = 0
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # a broken page stream; re-raised typed
            raise AttachmentError("corrupt", filename, kind="PDF") from exc
        lines = _lines_to_paragraphs(text)
        if not lines:
            empty_pages.append(number)
        paragraphs.extend(lines)
        chars += sum(len(line) for line in lines)
        if chars > limits.max_chars:
            raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
    if not paragraphs:
        raise AttachmentError("image_only", filename)
    return paragraphs, empty_pages


def _docx_blocks(document: DocxDocument) -> list[str]:
    """Body paragraphs and table rows in document order; a row is its distinct cell texts joined by ' | '."""
    blocks: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            for row in item.rows:
                cells: list[str] = []
                for cell in row.cells:
                    text = " ".join(_lines_to_paragraphs(cell.text))
                    if text and (not cells or cells[-1] != text):  # merged cells repeat their text
                        cells.append(text)
                if cells:
                    blocks.append(" | ".join(cells))
        else:
            blocks.extend(_lines_to_paragraphs(item.text))
    return blocks


def _extract_docx(filename: str, data: bytes, limits: AttachmentLimits) -> ExtractedDocument:
    if data.startswith(_OLE_MAGIC):
        raise AttachmentError("encrypted", filename)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise AttachmentError("corrupt", filename, kind="DOCX")
    try:
        document = docx.Document(io.BytesIO(data))
        paragraphs = _docx_blocks(document)
    except Exception as exc:  # python-docx raises KeyError, BadZipFile, lxml errors...; re-raised typed
        raise AttachmentError("corrupt", filename, kind="DOCX") from exc
    if not paragraphs:
        raise AttachmentError("no_text", filename)
    chars = sum(len(p) for p in paragraphs)
    if chars > limits.max_chars:
        raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
    return ExtractedDocument(filename, "docx", paragraphs)


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
    paragraphs = _lines_to_paragraphs(text)
    if not paragraphs:
        raise AttachmentError("empty", filename)
    chars = sum(len(p) for p in paragraphs)
    if chars > limits.max_chars:
        raise AttachmentError("too_many_chars", filename, chars=chars, limit=limits.max_chars)
    warnings = [f"文字コード {encoding} として読み取りました。"] if encoding not in ("utf-8",) else []
    return ExtractedDocument(filename, kind, paragraphs, warnings=warnings, encoding=encoding)


def extract_text_from_document(
    filename: str, data: bytes, *, limits: AttachmentLimits = DEFAULT_LIMITS
) -> ExtractedDocument:
    """Extract paragraphs from a PDF, DOCX, TXT or MD file held in memory (spec 00 添付ファイル処理).

    Raises AttachmentError (code + Japanese message) for unsupported, empty, over-limit,
    encrypted, corrupt and image-only files. Nothing is written to disk.
    """
    name = PurePath(filename or "").name or "（名前なし）"
    kind = PurePath(name).suffix.lower().lstrip(".")
    if kind == "doc":
        raise AttachmentError("legacy_doc", name)
    if kind not in SUPPORTED_EXTENSIONS:
        raise AttachmentError("unsupported", name)
    if not data:
        raise AttachmentError("empty", name)
    if len(data) > limits.max_bytes:
        raise AttachmentError(
            "too_large", name, size=_human_size(len(data)), limit=_human_size(limits.max_bytes)
        )
    if kind == "pdf":
        return _extract_pdf(name, data, limits)
    if kind == "docx":
        return _extract_docx(name, data, limits)
    return _extract_text_file(name, kind, data, limits)
