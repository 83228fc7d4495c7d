"""Attachment limits, errors and the extracted document (spec 00 添付ファイル処理, and their bounds).

Shared by core.documents.attachments (dispatch, text files), core.documents.pdf_reader, core.documents.docx_reader and the
extraction worker (core.documents.extract_worker), which sends documents and errors back as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from core.text.textnorm import repair_ideographs

# Limits (named here, in one place).
MAX_FILE_BYTES = 20 * 1024 * 1024  # 20 MB per file
MAX_PDF_PAGES = 300
MAX_TEXT_CHARS = 200_000  # extracted characters per file
MAX_UNCOMPRESSED_BYTES = 64 * 1024 * 1024  # a DOCX's members together, from its zip directory
MAX_COMPRESSION_RATIO = 100  # per member of 1 MB or more; Word's XML compresses about 5-15:1
MAX_ZIP_MEMBERS = 2_000
MAX_XML_ELEMENTS = 1_000_000  # all XML parts of a DOCX together
MAX_XML_TEXT_NODE = 1_000_000  # characters of one text node
MAX_XML_TEXT_TOTAL = 8_000_000  # characters of all text nodes (whitespace included)
MAX_PDF_STREAM_BYTES = 64 * 1024 * 1024  # decoded content streams of a whole PDF (checked before any text)
MAX_PDF_STREAM_EACH = 16 * 1024 * 1024  # any one decoded stream (pypdf's own limits, lowered)
SUPPORTED_EXTENSIONS = ("pdf", "docx", "txt", "md")
TEXT_ENCODINGS = ("utf-8-sig", "cp932", "shift_jis")  # utf-8-sig also reads plain UTF-8
# Encrypted Office files (and the legacy .doc format) are OLE compound files, not zips.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_RETRY = "必要な部分だけのファイルにしてください。"

ERROR_MESSAGES = {
    "unsupported": "対応していないファイル形式です（{name}）。PDF・DOCX・TXT・MD のいずれかを添付してください。",
    "legacy_doc": "旧形式の Word ファイル（.doc）は読み取れません（{name}）。Word で DOCX 形式に保存し直してから添付してください。",
    "empty": "ファイルが空です（{name}）。中身のあるファイルを添付してください。",
    "too_large": "ファイルが大きすぎます（{name}: {size}）。上限は {limit} です。" + _RETRY,
    "too_many_pages": "ページ数が多すぎます（{name}: {pages} ページ）。上限は {limit} ページです。必要なページだけのPDFにしてください。",
    "too_many_chars": "本文が長すぎます（{name}: 約 {chars:,} 文字）。上限は {limit:,} 文字です。" + _RETRY,
    "encrypted": "パスワードで保護されたファイルのため読み取れません（{name}）。保護を解除したファイルを添付してください。",
    "pdf_password": "パスワードで保護された PDF です（{name}）。「PDFのパスワード」欄にパスワードを入力すると読み取れます。",
    "wrong_password": "PDF のパスワードが違います（{name}）。「PDFのパスワード」欄を確認してください。",
    "corrupt": "ファイルが壊れているか、{kind} として読み取れません（{name}）。元のファイルを開いて保存し直してから添付してください。",
    "image_only": "文字情報のない PDF です（{name}: スキャン画像のみの可能性）。OCR でテキスト化したファイルか、DOCX・TXT を添付してください。",
    "no_text": "ファイルから本文を取り出せませんでした（{name}）。文字が含まれているか確認してください。",
    "encoding": "文字コードを判別できませんでした（{name}）。UTF-8 か Shift_JIS で保存したテキストを添付してください。",
    "expands_too_large": "展開後のサイズが大きすぎます（{name}: 展開すると {size} 以上）。上限は {limit} です。圧縮爆弾の可能性があるため読み取りませんでした。",
    "compression_ratio": "圧縮率が異常に高いファイルです（{name}: 約 {ratio:,.0f} 倍）。上限は {limit} 倍です。圧縮爆弾の可能性があるため読み取りませんでした。",
    "too_many_parts": "DOCX の内部ファイルが多すぎます（{name}: {count:,} 個）。上限は {limit:,} 個です。Word で保存し直してから添付してください。",
    "too_many_elements": "文書の構造が複雑すぎます（{name}: 要素数 {count:,} 以上）。上限は {limit:,} です。"
    + _RETRY,
    "text_node_too_long": "一続きの文字列が長すぎます（{name}: {chars:,} 文字以上）。上限は {limit:,} 文字です。空白や同じ文字だけが続くファイルの可能性があります。",
    "xml_text_too_long": "文書内の文字（空白を含む）が多すぎます（{name}: {chars:,} 文字以上）。上限は {limit:,} 文字です。"
    + _RETRY,
    "unsafe_xml": "DOCX に許可されていない定義（DTD・エンティティ）が含まれています（{name}）。Word で保存し直してから添付してください。",
    "stream_too_large": "PDF の内部データが展開すると大きすぎます（{name}: {size} 以上）。上限は {limit} です。"
    + _RETRY,
    "timeout": "読み取りに時間がかかりすぎたため中止しました（{name}: {seconds} 秒）。" + _RETRY,
    "memory": "読み取りに必要なメモリが上限（{limit}）を超えたため中止しました（{name}）。" + _RETRY,
    "cancelled": "読み取りを取り消しました（{name}）。もう一度添付すると読み取りを始めます。",
    "worker_failed": "ファイルの読み取り処理が異常終了しました（{name}）。ファイルを保存し直してから添付してください。",
}
# Codes whose details hold byte counts (shown as KB / MB).
_SIZE_DETAILS = ("size", "limit")
_SIZE_CODES = ("too_large", "expands_too_large", "stream_too_large", "memory")

Progress = Callable[[int, int], None]  # (done, total) pages


class AttachmentError(ValueError):
    """An attachment that cannot be used; `code` is a key of ERROR_MESSAGES, `message` is Japanese."""

    def __init__(self, code: str, filename: str, **details: object):
        self.code = code
        self.filename = filename
        self.details = details
        shown = {
            k: human_size(v) if code in _SIZE_CODES and k in _SIZE_DETAILS and isinstance(v, int) else v
            for k, v in details.items()
        }
        self.message = ERROR_MESSAGES[code].format(name=filename, **shown)
        super().__init__(self.message)


@dataclass(frozen=True)
class AttachmentLimits:
    max_bytes: int = MAX_FILE_BYTES
    max_pages: int = MAX_PDF_PAGES
    max_chars: int = MAX_TEXT_CHARS
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES
    max_ratio: int = MAX_COMPRESSION_RATIO
    max_members: int = MAX_ZIP_MEMBERS
    max_xml_elements: int = MAX_XML_ELEMENTS
    max_xml_text_node: int = MAX_XML_TEXT_NODE
    max_xml_text_total: int = MAX_XML_TEXT_TOTAL
    max_pdf_stream_bytes: int = MAX_PDF_STREAM_BYTES
    max_pdf_stream_each: int = MAX_PDF_STREAM_EACH


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

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (the extraction worker sends documents back this way)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractedDocument:
        return cls(
            str(data["filename"]),
            str(data["kind"]),
            [str(p) for p in data["paragraphs"]],
            data.get("page_count"),
            [str(w) for w in data.get("warnings") or []],
            data.get("encoding"),
        )


def human_size(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"


def lines_to_paragraphs(text: str) -> list[str]:
    """Spec 00: split on line breaks, strip, drop empty lines (PDF radicals repaired: 「⽉額」 -> 「月額」)."""
    text = repair_ideographs(text)
    return [
        line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()
    ]
