"""§N / 第N段落 detection, `$$[N]` answer parsing, Specified and Related extraction (spec 02 コンテキストの構成)."""

from __future__ import annotations

import json
import re
from typing import Any

from core.flows.review_chat.constants import (
    GAP_LINE,
    MAX_PARAGRAPH_DIGITS,
    REVIEW_ITEM_CATEGORIES,
    SPECIFIED_WINDOW,
)

_DIGITS = "[0-9０-９]"
# Only "§N" (digits right after §) and "第N段落"; "§ 3" and "¶3" are not matches (spec 02 検出対象).
_MENTION = re.compile(rf"§({_DIGITS}+)|第({_DIGITS}+)段落")
_MARKER = re.compile(r"^[ \t]*\$\$\[([0-9]+)\][ \t]*")


def _to_int(digits: str) -> int | None:
    if len(digits) > MAX_PARAGRAPH_DIGITS:
        return None
    return int(digits)  # int() reads full-width digits too: "３" -> 3


def extract_paragraph_numbers_from_user_input(text: str) -> list[int]:
    """spec 02 検出対象: paragraph numbers named as `§N` or `第N段落`, unique and ascending."""
    found: set[int] = set()
    for match in _MENTION.finditer(text or ""):
        number = _to_int(match.group(1) or match.group(2))
        if number is not None:
            found.add(number)
    return sorted(found)


def parse_marked_answer_paragraphs(answer_text: str) -> list[tuple[int, str]]:
    """spec 02 Specified: a line starting with `$$[N]` opens paragraph N; lines up to the next marker belong to it.

    Text before the first marker is not part of any paragraph. Content is stripped of surrounding blank space.
    """
    paragraphs: list[tuple[int, list[str]]] = []
    for line in (answer_text or "").splitlines():
        match = _MARKER.match(line)
        if match and len(match.group(1)) <= MAX_PARAGRAPH_DIGITS:
            paragraphs.append((int(match.group(1)), [line[match.end() :]]))
        elif paragraphs:
            paragraphs[-1][1].append(line)
    return [(number, "\n".join(lines).strip()) for number, lines in paragraphs]


def specified_ranges(
    existing: list[int], paragraph_numbers: list[int], window: int = SPECIFIED_WINDOW
) -> list[tuple[int, int]]:
    """The merged, clamped ranges N-window..N+window over the existing paragraph numbers, ascending."""
    if not existing:
        return []
    low, high = min(existing), max(existing)
    ranges = []
    for n in sorted(set(paragraph_numbers)):
        start, end = max(n - window, low), min(n + window, high)
        if start <= end:
            ranges.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1] + 1:  # overlapping or touching
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def extract_specified_text_from_answer(
    answer_text: str, paragraph_numbers: list[int], window: int = SPECIFIED_WINDOW
) -> str:
    """spec 02 Specified: §(N-5)～§(N+5) per N, clamped and merged; one block, `……` only between gaps.

    Each paragraph is one entry `§N 本文`; an empty string when no paragraph falls in any range.
    """
    paragraphs = sorted(parse_marked_answer_paragraphs(answer_text), key=lambda p: p[0])
    ranges = specified_ranges([n for n, _ in paragraphs], paragraph_numbers, window)
    chunks: list[list[str]] = []
    for start, end in ranges:
        chunk = [f"§{n} {text}".rstrip() for n, text in paragraphs if start <= n <= end]
        if chunk:
            chunks.append(chunk)
    lines: list[str] = []
    for i, chunk in enumerate(chunks):
        if i:
            lines.append(GAP_LINE)
        lines.extend(chunk)
    return "\n".join(lines)


def item_paragraph_numbers(item: Any) -> list[int]:
    """The paragraph numbers an item cites through `paragraph_numbers` (list) and/or `paragraph_number` (int)."""
    if not isinstance(item, dict):
        return []
    numbers: list[int] = []
    many = item.get("paragraph_numbers")
    if isinstance(many, list):
        numbers.extend(v for v in many if isinstance(v, int) and not isinstance(v, bool))
    one = item.get("paragraph_number")
    if isinstance(one, int) and not isinstance(one, bool):
        numbers.append(one)
    return sorted(set(numbers))


def related_review_items_by_category(
    review_json: Any, paragraph_numbers: list[int]
) -> list[tuple[str, dict[str, Any]]]:
    """(category, item) for each review item citing any of the numbers, in review order, without duplicates."""
    if not isinstance(review_json, dict):
        return []
    wanted = set(paragraph_numbers)
    seen: set[str] = set()
    found: list[tuple[str, dict[str, Any]]] = []
    for category in REVIEW_ITEM_CATEGORIES:
        items = review_json.get(category)
        if not isinstance(items, list):
            continue
        for item in items:
            if not wanted.intersection(item_paragraph_numbers(item)):
                continue
            fingerprint = json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)
            if fingerprint in seen:
                continue
            seen.add(fingerprint)
            found.append((category, item))
    return found


def get_related_review_json_items(review_json: Any, paragraph_numbers: list[int]) -> list[dict[str, Any]]:
    """spec 02 Related: items of strengths / weaknesses / important_points / future_considerations citing any N.

    An item cites N through `paragraph_numbers` (list) or `paragraph_number` (int). No duplicates; review order.
    """
    return [item for _, item in related_review_items_by_category(review_json, paragraph_numbers)]
