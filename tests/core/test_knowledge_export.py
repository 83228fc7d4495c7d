"""core.flows.knowledge.export: JSON, CSV, Markdown, DOCX of knowledge base entries."""

from __future__ import annotations

import csv
import io
import json

import docx

from core.flows.knowledge import export as kx
from core.flows.knowledge import interview as kf

ENTRIES = [
    {"id": 1, "version": 2, **{k: f'{k}の値, "引用"\n改行' for k in kf.KNOWLEDGE_FIELDS}},
    {"id": 2, "version": 1, **{k: "" for k in kf.KNOWLEDGE_FIELDS}, "knowledge_title": "二件目"},
]


def test_json_round_trips():
    data = json.loads(kx.entries_to_json(ENTRIES))
    assert [d["id"] for d in data] == [1, 2]
    assert {k: data[0][k] for k in kf.KNOWLEDGE_FIELDS} == {k: ENTRIES[0][k] for k in kf.KNOWLEDGE_FIELDS}


def test_csv_has_bom_header_and_quoting():
    raw = kx.entries_to_csv(ENTRIES)
    assert raw.startswith("\ufeff".encode())
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert list(rows[0]) == [
        "ID",
        "版",
        "契約類型",
        "ナレッジ名",
        "対象条項",
        "審査ポイント",
        "対応方針",
        "条項サンプル",
    ]
    assert rows[0]["条項サンプル"] == ENTRIES[0]["clause_sample"] and rows[1]["ナレッジ名"] == "二件目"


def test_markdown_sections():
    md = kx.entries_to_markdown(ENTRIES)
    assert md.startswith("# 契約審査ナレッジ\n")
    assert "## 2. 二件目" in md and "### 対応方針" in md and "（未記入）" in md


def test_docx_has_heading_and_field_table_per_entry():
    document = docx.Document(io.BytesIO(kx.entries_to_docx(ENTRIES)))
    headings = [p.text for p in document.paragraphs if p.style.name.startswith("Heading")]
    assert headings == [f"1. {ENTRIES[0]['knowledge_title']}", "2. 二件目"]
    assert len(document.tables) == 2
    assert document.tables[0].cell(0, 0).text == "契約類型"
    assert document.tables[0].cell(0, 1).text == ENTRIES[0]["contract_type"]
