"""A pasted answer split into numbered paragraphs, the split adjusted, and the `$$[N]`-marked answer text.

The splitting rule, in order:
1. Line endings are unified (CRLF / CR -> LF) and radical / compatibility code points that PDFs put in place
   of ordinary kanji are repaired (core.text.textnorm.repair_ideographs); nothing else of the text changes.
2. Text that already carries `$$[N]` markers at line starts: every marker line opens a paragraph (the
   numbers written are ignored; paragraphs are numbered 1, 2, ... in order); text before the first marker
   is a paragraph of its own.
3. Otherwise, text with at least one blank line between its lines (empty or only spaces): paragraphs are separated by blank
   lines; the lines of one paragraph stay together (line breaks kept).
4. Otherwise (no blank line at all): every non-empty line is a paragraph.
Spaces around a paragraph (also a full-width indent) are not kept: the `$$[N]` reader strips them. No other
character is dropped: `same_text(pasted, paragraphs)` checks exactly that.
"""

from __future__ import annotations

import re

from core.flows.review_chat.paragraphs import parse_marked_answer_paragraphs
from core.text.textnorm import repair_ideographs

_MARKER_LINE = re.compile(r"^[ \t]*\$\$\[[0-9]+\]")
_BLANK = re.compile(r"^\s*$")


def clean_pasted(text: str) -> str:
    """Line endings unified and PDF radicals repaired (the only normalization applied to an answer)."""
    return repair_ideographs((text or "").replace("\r\n", "\n").replace("\r", "\n"))


def _blocks_by_markers(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if _MARKER_LINE.match(line):
            blocks.append([_MARKER_LINE.sub("", line, count=1)])
        else:
            blocks[-1].append(line)
    return blocks


def _blocks_by_blank_lines(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if _BLANK.match(line):
            blocks.append([])
        else:
            blocks[-1].append(line)
    return blocks


def split_answer(text: str) -> list[str]:
    """The pasted answer as paragraph texts, §1 first (see the module docstring for the rule)."""
    lines = clean_pasted(text).strip().split("\n")  # blank lines around the whole text do not count
    if any(_MARKER_LINE.match(line) for line in lines):
        blocks = _blocks_by_markers(lines)
    elif any(_BLANK.match(line) for line in lines):
        blocks = _blocks_by_blank_lines(lines)
    else:
        blocks = [[line] for line in lines]
    paragraphs = ["\n".join(block).strip() for block in blocks]
    return [p for p in paragraphs if p]


def join_paragraphs(paragraphs: list[str]) -> str:
    """The paragraphs as plain text, a blank line between them (what `split_answer` splits back)."""
    return "\n\n".join(paragraphs)


def merge_with_next(paragraphs: list[str], number: int) -> list[str]:
    """§`number` and §`number`+1 become one paragraph (a line break between them); out of range: unchanged."""
    index = number - 1
    if not 0 <= index < len(paragraphs) - 1:
        return list(paragraphs)
    merged = f"{paragraphs[index]}\n{paragraphs[index + 1]}"
    return [*paragraphs[:index], merged, *paragraphs[index + 2 :]]


def split_at_line(paragraphs: list[str], number: int, line: int) -> list[str]:
    """§`number` split before its line `line` (1-based, at least 2): the lines from there become §`number`+1.

    Out of range (no such paragraph or line): unchanged.
    """
    index = number - 1
    if not 0 <= index < len(paragraphs):
        return list(paragraphs)
    lines = paragraphs[index].split("\n")
    if not 2 <= line <= len(lines):
        return list(paragraphs)
    head, tail = "\n".join(lines[: line - 1]).strip(), "\n".join(lines[line - 1 :]).strip()
    if not head or not tail:
        return list(paragraphs)
    return [*paragraphs[:index], head, tail, *paragraphs[index + 1 :]]


def marked_answer(paragraphs: list[str]) -> str:
    """The stored answer: each paragraph opened by `$$[N] ` on its first line (spec 02 `$$[N]` 形式)."""
    return "\n".join(f"$$[{n}] {text}" for n, text in enumerate(paragraphs, start=1))


def marked_round_trip(paragraphs: list[str]) -> bool:
    """Whether the importer reads `marked_answer(paragraphs)` back as exactly these paragraphs, §1..§n."""
    expected = [(n, text.strip()) for n, text in enumerate(paragraphs, start=1)]
    return parse_marked_answer_paragraphs(marked_answer(paragraphs)) == expected


def same_text(pasted: str, paragraphs: list[str]) -> bool:
    """Whether the paragraphs hold every non-space character of the pasted text, in order (markers aside)."""
    lines = clean_pasted(pasted).split("\n")
    body = "".join(_MARKER_LINE.sub("", line, count=1) for line in lines)
    return re.sub(r"\s", "", body) == re.sub(r"\s", "", "".join(paragraphs))
