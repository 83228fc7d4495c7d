"""Exports of knowledge base entries: JSON, CSV, Markdown, DOCX (issue 3, knowledge base tab).

Entries are dicts with the six spec 00 fields (extra keys such as id / version are kept in
JSON and CSV). Nothing here writes to disk: every function returns bytes or text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import docx

from core.flows.knowledge import KNOWLEDGE_FIELD_LABELS, KNOWLEDGE_FIELDS

META_COLUMNS = ("id", "version", "updated_at", "updated_by", "source_interview_id")


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: entry[k] for k in META_COLUMNS if k in entry}


def entries_to_json(entries: Sequence[Mapping[str, Any]]) -> str:
    """A JSON array; each object has the six fields, plus id/version metadata when present."""
    rows = [{**_meta(e), **{k: str(e.get(k, "") or "") for k in KNOWLEDGE_FIELDS}} for e in entries]
    return json.dumps(rows, ensure_ascii=False, indent=2)


def entries_to_csv(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """CSV in UTF-8 with BOM (opens correctly in Excel), header = field names."""
    columns = [c for c in META_COLUMNS if any(c in e for e in entries)] + list(KNOWLEDGE_FIELDS)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for e in entries:
        writer.writerow({c: e.get(c, "") for c in columns})
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def entries_to_markdown(entries: Sequence[Mapping[str, Any]]) -> str:
    """One `##` section per entry, one `###` heading per field (values as written, never HTML)."""
    parts = ["# 契約審査ナレッジ", ""]
    for number, e in enumerate(entries, start=1):
        parts.append(f"## {number}. {e.get('knowledge_title') or '（無題）'}")
        parts.append("")
        for key in KNOWLEDGE_FIELDS:
            if key == "knowledge_title":
                continue
            parts += [f"### {KNOWLEDGE_FIELD_LABELS[key]}", "", str(e.get(key, "") or "（未記入）"), ""]
    return "\n".join(parts).rstrip() + "\n"


def entries_to_docx(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """A Word document: one heading per entry and a two-column table of its fields."""
    document = docx.Document()
    document.add_heading("契約審査ナレッジ", level=0)
    for number, e in enumerate(entries, start=1):
        document.add_heading(f"{number}. {e.get('knowledge_title') or '（無題）'}", level=1)
        fields = [k for k in KNOWLEDGE_FIELDS if k != "knowledge_title"]
        table = document.add_table(rows=len(fields), cols=2)
        table.style = "Table Grid"
        for row, key in zip(table.rows, fields, strict=True):
            row.cells[0].text = KNOWLEDGE_FIELD_LABELS[key]
            row.cells[1].text = str(e.get(key, "") or "")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()
