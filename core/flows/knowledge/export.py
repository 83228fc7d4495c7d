"""Exports of knowledge base entries: JSON, CSV, Markdown, DOCX (knowledge base tab).

Entries are dicts with the six spec 00 fields (extra keys such as id / version are kept in
JSON and CSV). Nothing here writes to disk: every function returns bytes or text.

The knowledge base is shared, so an export is safe to open whatever an entry holds (core.text.export): CSV
cells cannot run as formulas, Markdown carries no live image, HTML or link, and DOCX and JSON hold only
characters their formats can. `export_entries` builds a file even when one entry cannot be written: that
entry is left out and named, in Japanese, at the end of the file.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import docx

from core.flows.knowledge.interview import KNOWLEDGE_FIELD_LABELS, KNOWLEDGE_FIELDS
from core.text.export import excel_csv, markdown_text, xml_text
from core.text.safe import clean_text, safe_value

META_COLUMNS = ("id", "version", "updated_at", "updated_by", "source_interview_id")


Builder = Callable[[Sequence[Mapping[str, Any]]], str | bytes]
FAILED_TITLE = "書き出せなかったナレッジ"


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: safe_value(entry[k]) for k in META_COLUMNS if k in entry}


def _text(entry: Mapping[str, Any], key: str) -> str:
    return clean_text(entry.get(key, "") or "")[0]


def entries_to_json(entries: Sequence[Mapping[str, Any]]) -> str:
    """A JSON array; each object has the six fields, plus id/version metadata when present."""
    rows = [{**_meta(e), **{k: _text(e, k) for k in KNOWLEDGE_FIELDS}} for e in entries]
    return json.dumps(rows, ensure_ascii=False, indent=2)


META_LABELS = {
    "id": "ID",
    "version": "版",
    "updated_at": "更新日時",
    "updated_by": "更新者",
    "source_interview_id": "元の聞き取りID",
}


def entries_to_csv(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """CSV for Excel in Japan (core.text.export.excel_csv): BOM, the fields' Japanese names as the header,
    更新日時 in Japan time; no cell reads as a formula."""
    columns = [c for c in META_COLUMNS if any(c in e for e in entries)] + list(KNOWLEDGE_FIELDS)
    names = {c: META_LABELS.get(c) or KNOWLEDGE_FIELD_LABELS[c] for c in columns}
    rows = [{c: e.get(c, "") for c in columns} for e in entries]
    return excel_csv(rows, names, times=("updated_at",))


def entries_to_markdown(entries: Sequence[Mapping[str, Any]]) -> str:
    """One `##` section per entry, one `###` heading per field (values as inert text: no image, HTML or link)."""
    parts = ["# 契約審査ナレッジ", ""]
    for number, e in enumerate(entries, start=1):
        parts.append(
            f"## {number}. {markdown_text(' '.join(_text(e, 'knowledge_title').split())) or '（無題）'}"
        )
        parts.append("")
        for key in KNOWLEDGE_FIELDS:
            if key == "knowledge_title":
                continue
            parts += [
                f"### {KNOWLEDGE_FIELD_LABELS[key]}",
                "",
                markdown_text(_text(e, key)) or "（未記入）",
                "",
            ]
    return "\n".join(parts).rstrip() + "\n"


def entries_to_docx(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """A Word document: one heading per entry and a two-column table of its fields (any text: see xml_text)."""
    document = docx.Document()
    document.add_heading("契約審査ナレッジ", level=0)
    for number, e in enumerate(entries, start=1):
        document.add_heading(f"{number}. {xml_text(_text(e, 'knowledge_title')) or '（無題）'}", level=1)
        fields = [k for k in KNOWLEDGE_FIELDS if k != "knowledge_title"]
        table = document.add_table(rows=len(fields), cols=2)
        table.style = "Table Grid"
        for row, key in zip(table.rows, fields, strict=True):
            row.cells[0].text = KNOWLEDGE_FIELD_LABELS[key]
            row.cells[1].text = xml_text(_text(e, key))
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def entry_name(entry: Mapping[str, Any]) -> str:
    """「ID 3「秘密保持の範囲」」: how a message names an entry."""
    title = " ".join(_text(entry, "knowledge_title").split())[:60] or "（無題）"
    return f"ID {entry.get('id', '-')}「{title}」"


def export_entries(build: Builder, entries: Sequence[Mapping[str, Any]]) -> str | bytes:
    """`build(entries)`; when it fails, the file of the entries it can write, with a last section naming each
    entry left out and why (the person can fix it in the editor and export again)."""
    try:
        return build(entries)
    except Exception:  # noqa: BLE001 - one broken entry must not cost the team the whole export
        pass
    good: list[Mapping[str, Any]] = []
    failed: list[str] = []
    for entry in entries:
        try:
            build([entry])
        except Exception as exc:  # noqa: BLE001 - named in the file instead
            failed.append(f"{entry_name(entry)}: {type(exc).__name__}")
        else:
            good.append(entry)
    note = {"knowledge_title": FAILED_TITLE, "review_points": "\n".join(failed)}
    return build([*good, note])
