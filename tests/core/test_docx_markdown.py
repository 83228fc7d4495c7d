"""Markdown into Word: python-docx reads back bold runs, quotes, list paragraphs, headings and tables."""

from __future__ import annotations

import io

import docx

from core.documents.docx_markdown import add_markdown, add_plain, inline_runs

REPLY = """（デモモデルの応答）

**§13 の記述**
> 5 以上より、A の D に対する請求は認められない。
> 次の行。

講評では、次のように述べています。
- **改善点: 絶対的構成の理由づけが薄い**（§10、§11） — *理由*を示してください。
- `94条2項` と [条文](https://example.com/law)
  - 入れ子の項目
1. 規範を立てる
2. 当てはめる

## まとめ
| 観点 | 評価 |
|---|---|
| 規範 | **不足** |
"""


def read_back(text: str, heading_level: int = 3) -> docx.document.Document:
    document = docx.Document()
    add_markdown(document, text, heading_level=heading_level)
    buf = io.BytesIO()
    document.save(buf)
    return docx.Document(io.BytesIO(buf.getvalue()))


def test_a_reply_becomes_word_formatting() -> None:
    document = read_back(REPLY)
    paragraphs = [(p.style.name if p.style is not None else "", p.text) for p in document.paragraphs]
    assert paragraphs == [
        ("Normal", "（デモモデルの応答）"),
        ("Normal", "§13 の記述"),
        ("Quote", "5 以上より、A の D に対する請求は認められない。\n次の行。"),
        ("Normal", "講評では、次のように述べています。"),
        ("List Bullet", "改善点: 絶対的構成の理由づけが薄い（§10、§11） — 理由を示してください。"),
        ("List Bullet", "94条2項 と 条文（https://example.com/law）"),
        ("List Bullet 2", "入れ子の項目"),
        ("List Number", "規範を立てる"),
        ("List Number", "当てはめる"),
        ("Heading 4", "まとめ"),
    ]
    assert not any("**" in text or text.startswith(("> ", "- ")) for _, text in paragraphs)
    bold = document.paragraphs[4].runs[0]
    assert (bold.text, bold.bold) == ("改善点: 絶対的構成の理由づけが薄い", True)
    italic = [r for r in document.paragraphs[4].runs if r.italic]
    assert [r.text for r in italic] == ["理由"]
    code = document.paragraphs[5].runs[0]
    assert (code.text, code.font.name) == ("94条2項", "Consolas")
    assert document.paragraphs[1].runs[0].bold is True
    (table,) = document.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [["観点", "評価"], ["規範", "不足"]]
    assert table.cell(1, 1).paragraphs[0].runs[0].bold is True


def test_marks_that_are_not_markdown_stay_text() -> None:
    runs = inline_runs("a_b_c と 2*3 と \\*記号\\* と <b>太字</b>")
    assert "".join(r.text for r in runs) == "a_b_c と 2*3 と *記号* と <b>太字</b>"
    assert not any(r.bold or r.italic or r.code for r in runs)


def test_plain_text_keeps_its_marks_and_line_breaks_and_bad_characters_never_break_the_file() -> None:
    document = docx.Document()
    add_plain(document, "**そのまま**\n次の行\x00")
    add_markdown(document, "**太字**\x07")
    buf = io.BytesIO()
    document.save(buf)
    back = docx.Document(io.BytesIO(buf.getvalue()))
    assert [p.text for p in back.paragraphs] == ["**そのまま**\n次の行", "太字"]
