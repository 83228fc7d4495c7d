"""The per-turn context text: always-on and conditional blocks (spec 02 コンテキストの構成（毎回組み立て）)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.flows.review_chat.constants import (
    HEADER_GRADING,
    HEADER_OVERALL,
    HEADER_PURPOSE,
    HEADER_QUESTION,
    HEADER_RELATED,
    HEADER_SPECIFIED,
    KEYWORD_GRADING,
    KEYWORD_PURPOSE,
)
from core.flows.review_chat.paragraphs import (
    extract_paragraph_numbers_from_user_input,
    extract_specified_text_from_answer,
    item_paragraph_numbers,
    parse_marked_answer_paragraphs,
    related_review_items_by_category,
    specified_ranges,
)

EMPTY_QUESTION = "（問題文は登録されていません）"
EMPTY_OVERALL = "（全体講評は登録されていません）"
EMPTY_PURPOSE = "（出題趣旨は登録されていません）"
EMPTY_GRADING = "（採点実感は登録されていません）"
EMPTY_SPECIFIED = "（指定された段落は答案にありません）"
EMPTY_RELATED = "（指定された段落に関連する講評項目はありません）"


@dataclass
class ContextBlock:
    """One block of the context: its header, why it was included, and its body."""

    header: str
    reason: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.header}\n{self.body}"


@dataclass
class ReviewContext:
    """The assembled context and how it was assembled (for the page's per-turn expander)."""

    blocks: list[ContextBlock] = field(default_factory=list)
    paragraph_numbers: list[int] = field(default_factory=list)
    paragraph_source: str = "none"  # input | override | none

    @property
    def text(self) -> str:
        return "\n\n".join(block.text for block in self.blocks)

    @property
    def headers(self) -> list[str]:
        return [block.header for block in self.blocks]


def overall_review_text(review_json: Any) -> str:
    """`overall_review` only (spec 02 【講評（全体）】), as text."""
    value = review_json.get("overall_review") if isinstance(review_json, dict) else None
    if value is None or value == "":
        return EMPTY_OVERALL
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def neighbour_numbers(answer_text: str, paragraph_numbers: list[int]) -> list[int]:
    """The answer's paragraphs within the Specified window of the numbers (the numbers themselves left out)."""
    existing = [n for n, _ in parse_marked_answer_paragraphs(answer_text)]
    ranges = specified_ranges(existing, paragraph_numbers)
    asked = set(paragraph_numbers)
    return [n for n in sorted(set(existing)) if n not in asked and any(a <= n <= b for a, b in ranges)]


def nearest_on_each_side(candidates: list[int], numbers: list[int]) -> list[int]:
    """For each number, the closest candidate before it and the closest after it (ascending, no duplicates)."""
    chosen: set[int] = set()
    for n in numbers:
        before = [c for c in candidates if c < n]
        after = [c for c in candidates if c > n]
        chosen.update(([before[-1]] if before else []) + ([after[0]] if after else []))
    return sorted(chosen)


def related_block_body(review_json: Any, paragraph_numbers: list[int]) -> str:
    """The Related items as one JSON object keyed by review category (review order, no duplicates)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for category, item in related_review_items_by_category(review_json, paragraph_numbers):
        grouped.setdefault(category, []).append(item)
    if not grouped:
        return EMPTY_RELATED
    # Valid JSON with one item per line: readable for people and compact for the model.
    parts = []
    for category, items in grouped.items():
        lines = ",\n".join(f"    {json.dumps(item, ensure_ascii=False, default=str)}" for item in items)
        parts.append(f"  {json.dumps(category)}: [\n{lines}\n  ]")
    return "{\n" + ",\n".join(parts) + "\n}"


def _labels(numbers: list[int]) -> str:
    return "、".join(f"§{n}" for n in numbers)


def assemble_review_context(
    question_text: str,
    review_json: Any,
    user_input: str,
    purpose_text: str,
    grading_impression_text: str,
    answer_text: str,
    paragraph_numbers_override: list[int] | None = None,
) -> ReviewContext:
    """spec 02 コンテキストの構成: the blocks with the reason each one fired."""
    user_input = user_input or ""
    context = ReviewContext()
    context.blocks.append(
        ContextBlock(HEADER_QUESTION, "常に含める", (question_text or "").strip() or EMPTY_QUESTION)
    )
    context.blocks.append(
        ContextBlock(HEADER_OVERALL, "常に含める（全体講評のみ）", overall_review_text(review_json))
    )
    if KEYWORD_PURPOSE in user_input:
        body = (purpose_text or "").strip() or EMPTY_PURPOSE
        context.blocks.append(ContextBlock(HEADER_PURPOSE, f"入力に「{KEYWORD_PURPOSE}」が含まれる", body))
    if KEYWORD_GRADING in user_input:
        body = (grading_impression_text or "").strip() or EMPTY_GRADING
        context.blocks.append(ContextBlock(HEADER_GRADING, f"入力に「{KEYWORD_GRADING}」が含まれる", body))
    numbers = extract_paragraph_numbers_from_user_input(user_input)
    if numbers:
        context.paragraph_source = "input"
        reason = f"入力に {_labels(numbers)} が含まれる"
    elif paragraph_numbers_override:
        numbers = sorted(set(paragraph_numbers_override))
        context.paragraph_source = "override"
        reason = f"保持している段落番号 {_labels(numbers)} を使う"
    if numbers:
        context.paragraph_numbers = numbers
        specified = extract_specified_text_from_answer(answer_text, numbers) or EMPTY_SPECIFIED
        context.blocks.append(ContextBlock(HEADER_SPECIFIED, reason, specified))
        context.blocks.append(related_block(review_json, answer_text, numbers, reason))
    return context


def related_block(review_json: Any, answer_text: str, numbers: list[int], reason: str) -> ContextBlock:
    """Related: the items citing the numbers; when none does, the items citing the paragraphs around them (the
    Specified window), so a question about an uncited paragraph still gets the neighbouring review."""
    if related_review_items_by_category(review_json, numbers):
        return ContextBlock(HEADER_RELATED, reason, related_block_body(review_json, numbers))
    around = neighbour_numbers(answer_text, numbers)
    cited_around = {
        n
        for _, item in related_review_items_by_category(review_json, around)
        for n in item_paragraph_numbers(item)
    } & set(around)
    cited = nearest_on_each_side(sorted(cited_around), numbers)
    if not cited:
        return ContextBlock(HEADER_RELATED, reason, EMPTY_RELATED)
    return ContextBlock(
        HEADER_RELATED,
        f"{_labels(numbers)} を挙げた講評がないため、前後の段落（{_labels(cited)}）の講評を含める",
        related_block_body(review_json, cited),
    )


def build_review_chat_context_text(
    question_text: str,
    review_json: Any,
    user_input: str,
    purpose_text: str,
    grading_impression_text: str,
    answer_text: str,
    paragraph_numbers_override: list[int] | None = None,
) -> str:
    """spec 02 `_build_review_chat_context_text`: 【問題文】 and 【講評（全体）】 always; 【出題趣旨／参考文章】,
    【採点実感】 on their keywords; Specified and Related when paragraph numbers apply (input, else override).
    """
    return assemble_review_context(
        question_text,
        review_json,
        user_input,
        purpose_text,
        grading_impression_text,
        answer_text,
        paragraph_numbers_override,
    ).text
