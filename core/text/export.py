"""Exports safe to open (ARCHITECTURE "text is made safe once where it enters ... an export").

- CSV: a text cell that begins with `=`, `+`, `-`, `@`, tab or CR (or their full-width forms, which a
  Japanese Excel also reads as a formula) gets a leading apostrophe, as OWASP's CSV injection guidance says,
  so a spreadsheet shows it as text and never runs it. Numbers stay numbers; the raw values stay in JSONL.
- Markdown: text goes through the on-screen safe renderer (core.text.safe_markdown), so an image, raw HTML or a
  `javascript:` link in an export is inert text, exactly as on screen.
- XML (DOCX): characters XML 1.0 cannot hold are cleaned (core.text.safe) and any left removed, so a Word
  export never fails on what someone typed.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.text.safe import clean_text
from core.text.safe_markdown import safe_llm_markdown

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet cannot read as a formula (numbers and None are left as they are)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    raw = value if isinstance(value, str) else str(value)
    text = clean_text(raw)[0]
    return "'" + text if raw.startswith(FORMULA_STARTS) or text.startswith(FORMULA_STARTS) else text


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], *, bom: bool = False) -> str:
    """CSV with a header row; every cell (header included) through `csv_cell`. `bom` starts it with U+FEFF
    (Excel then opens UTF-8 correctly)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow([csv_cell(c) for c in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(c)) for c in columns])
    return ("\ufeff" if bom else "") + buf.getvalue()


def markdown_text(value: Any) -> str:
    """Text for a Markdown export: cleaned, then inert (no image, raw HTML or live link), as on screen."""
    return safe_llm_markdown(clean_text(value)[0])


def xml_text(value: Any) -> str:
    """Text a DOCX (XML 1.0) can hold: cleaned as for storage, then anything XML still refuses removed."""
    return _XML_INVALID.sub("", clean_text(value)[0])
