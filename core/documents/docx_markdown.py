"""Markdown written into a Word document as Word formatting, not as its marks.

A model's reply (and a summary) is Markdown; pasted into Word as text it shows `**…**`, `> …` and `- …`. Here the
common subset becomes Word's own formatting: headings, paragraphs (line breaks kept), block quotes (the Quote
style), bullet and numbered lists (List Bullet / List Number, one level of nesting), fenced code, pipe
tables, a rule; inline bold, italic, code, links (their text, then the address) and backslash escapes.
Everything else stays text. No HTML is interpreted and no image or link is made live. Every text goes through
core.text.export.xml_text, so what XML cannot hold never breaks the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docx.document import Document
from docx.shared import Pt
from docx.text.paragraph import Paragraph

from core.text.export import xml_text

CODE_FONT = "Consolas"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBER = re.compile(r"^(\s*)\d{1,9}[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
# Inline: code, bold (** or __), italic (* only: `_` is common inside Japanese file names and ids), links, escapes.
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|__(?P<bold2>.+?)__"
    r"|(?<!\*)\*(?P<italic>[^*\s](?:[^*]*[^*\s\\])?)\*(?!\*)"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\)"
    r"|\\(?P<escaped>[\\`*_{}\[\]()#+\-.!>|~])"
)


@dataclass
class _Run:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False


def inline_runs(text: str, *, bold: bool = False, italic: bool = False) -> list[_Run]:
    """Inline Markdown as runs: the marks removed, their meaning kept as run formatting (nested bold/italic)."""
    runs: list[_Run] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            runs.append(_Run(text[position : match.start()], bold, italic))
        if match.group("code") is not None:
            runs.append(_Run(match.group("code_text"), bold, italic, code=True))
        elif match.group("bold") is not None or match.group("bold2") is not None:
            inner = match.group("bold") if match.group("bold") is not None else match.group("bold2")
            runs += inline_runs(inner, bold=True, italic=italic)
        elif match.group("italic") is not None:
            runs += inline_runs(match.group("italic"), bold=bold, italic=True)
        elif match.group("link_text") is not None:
            runs += inline_runs(match.group("link_text"), bold=bold, italic=italic)
            runs.append(_Run(f"（{match.group('link_url')}）", bold, italic))
        else:
            runs.append(_Run(match.group("escaped"), bold, italic))
        position = match.end()
    if position < len(text):
        runs.append(_Run(text[position:], bold, italic))
    return [run for run in runs if run.text]


def add_inline(paragraph: Paragraph, text: str) -> None:
    """Add one line of inline Markdown to a paragraph as formatted runs."""
    for run in inline_runs(text):
        added = paragraph.add_run(xml_text(run.text))
        added.bold = run.bold or None
        added.italic = run.italic or None
        if run.code:
            added.font.name = CODE_FONT


def _add_lines(paragraph: Paragraph, lines: list[str]) -> None:
    for index, line in enumerate(lines):
        if index:
            paragraph.add_run().add_break()
        add_inline(paragraph, line.strip())


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _add_table(document: Document, rows: list[list[str]]) -> None:
    width = max(len(row) for row in rows)
    table = document.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c in range(width):
            paragraph = table.cell(r, c).paragraphs[0]
            add_inline(paragraph, row[c] if c < len(row) else "")
            if r == 0:
                for run in paragraph.runs:
                    run.bold = True


class _Writer:
    """Walks the Markdown lines once: text and quote lines gather into one paragraph until a block ends them."""

    def __init__(self, document: Document, text: str, heading_level: int) -> None:
        self.document = document
        self.lines = (text or "").replace("\r\n", "\n").split("\n")
        self.index = 0
        self.heading_level = heading_level
        self.paragraph: list[str] = []
        self.quote: list[str] = []

    def flush(self) -> None:
        if self.paragraph:
            _add_lines(self.document.add_paragraph(), self.paragraph)
            self.paragraph = []
        if self.quote:
            _add_lines(self.document.add_paragraph(style="Quote"), self.quote)
            self.quote = []

    def write(self) -> None:
        while self.index < len(self.lines):
            line = self.lines[self.index]
            self.index += 1
            if (quote := _QUOTE.match(line)) is not None:
                if self.paragraph:
                    self.flush()
                self.quote.append(quote.group(1))
            elif not line.strip() or self.quote or not self.text_line(line):
                self.flush()
                if line.strip():
                    self.block(line)
        self.flush()

    def text_line(self, line: str) -> bool:
        """Gather a plain text line; False when the line opens a block of its own."""
        opens_table = (
            "|" in line and self.index < len(self.lines) and _TABLE_SEPARATOR.match(self.lines[self.index])
        )
        if _FENCE.match(line) or _HEADING.match(line) or _RULE.match(line) or opens_table:
            return False
        if _BULLET.match(line) or _NUMBER.match(line):
            return False
        self.paragraph.append(line)
        return True

    def opens_table(self, line: str) -> bool:
        following = self.lines[self.index] if self.index < len(self.lines) else ""
        return "|" in line and _TABLE_SEPARATOR.match(following) is not None

    def block(self, line: str) -> None:
        if _FENCE.match(line):
            self.code()
        elif (heading := _HEADING.match(line)) is not None:
            level = min(self.heading_level + len(heading.group(1)) - 1, 9)
            add_inline(self.document.add_heading(level=level), heading.group(2))
        elif _RULE.match(line):
            return
        elif (item := _BULLET.match(line) or _NUMBER.match(line)) is not None:
            nested = len(item.group(1).expandtabs(4)) >= 2
            style = "List Bullet" if item.re is _BULLET else "List Number"
            add_inline(self.document.add_paragraph(style=f"{style} 2" if nested else style), item.group(2))
        elif self.opens_table(line):
            self.table(line)
        else:
            self.paragraph.append(line)

    def code(self) -> None:
        code: list[str] = []
        while self.index < len(self.lines) and not _FENCE.match(self.lines[self.index]):
            code.append(self.lines[self.index])
            self.index += 1
        self.index += 1  # the closing fence
        paragraph = self.document.add_paragraph()
        for number, code_line in enumerate(code):
            if number:
                paragraph.add_run().add_break()
            run = paragraph.add_run(xml_text(code_line))
            run.font.name, run.font.size = CODE_FONT, Pt(9)

    def table(self, header: str) -> None:
        rows = [_cells(header)]
        self.index += 1  # the separator line
        while (
            self.index < len(self.lines) and "|" in self.lines[self.index] and self.lines[self.index].strip()
        ):
            rows.append(_cells(self.lines[self.index]))
            self.index += 1
        _add_table(self.document, rows)


def add_markdown(document: Document, text: str, *, heading_level: int = 3) -> None:
    """Write Markdown text into the document as Word formatting; `#` becomes a heading at `heading_level`
    (`##` one deeper, and so on, at most level 9)."""
    _Writer(document, text, heading_level).write()


def add_plain(document: Document, text: str) -> Paragraph:
    """Text exactly as typed (no Markdown): one paragraph, its line breaks kept."""
    return document.add_paragraph(xml_text(text))
