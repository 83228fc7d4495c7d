"""Exports safe to open (ARCHITECTURE "text is made safe once where it enters ... an export").

- CSV for people (`excel_csv`, every CSV download of the app): UTF-8 with a BOM, Japanese column names, times
  as Japan time (the display zone, Asia/Tokyo by default) in `YYYY-MM-DD HH:MM:SS`, so Excel in Japan opens it
  as it is; raw values (English ids, epoch seconds) stay in the JSON / JSONL exports.
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

from core.clock import format_local
from core.text.safe import clean_text
from core.text.safe_markdown import safe_llm_markdown

CSV_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
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


def excel_csv(
    rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str], *, times: Iterable[str] = ()
) -> bytes:
    """The app's CSV for people: `columns` maps each key of the rows to its Japanese column name (in order);
    the `times` keys hold UTC epoch seconds and are written as local (Japan) time. UTF-8 with BOM; no cell can
    read as a formula (`csv_cell`)."""
    time_keys = set(times)

    def cell(key: str, value: Any) -> Any:
        if key in time_keys and isinstance(value, int | float) and not isinstance(value, bool):
            return format_local(value, CSV_TIME_FORMAT)
        return value

    named = [{name: cell(key, row.get(key)) for key, name in columns.items()} for row in rows]
    return csv_text(named, list(columns.values()), bom=True).encode("utf-8")


def markdown_text(value: Any) -> str:
    """Text for a Markdown export: cleaned, then inert (no image, raw HTML or live link), as on screen. Every
    `<` is written as `&lt;`, inside code spans too: fields are joined into one document, so a backtick of
    one field can pair with another's and turn text the screen showed as code into live HTML."""
    return safe_llm_markdown(clean_text(value)[0]).replace("<", "&lt;")


def xml_text(value: Any) -> str:
    """Text a DOCX (XML 1.0) can hold: cleaned as for storage, then anything XML still refuses removed."""
    return _XML_INVALID.sub("", clean_text(value)[0])
