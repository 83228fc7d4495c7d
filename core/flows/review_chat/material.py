"""Your own review material: the form's draft -> a checked review record, and back.

A draft holds the answer as paragraph texts (§1 first) and the review items with the paragraph numbers
chosen from the preview. `check_draft` lists every problem in Japanese; `build_record` makes the record the
importer would accept (the `$$[N]`-marked answer and a review JSON passing schemas/review_record.schema.json).
Merging or splitting paragraphs renumbers the items' paragraph numbers with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from core.flows.review_chat.answer_split import (
    marked_answer,
    marked_round_trip,
    merge_with_next,
    split_at_line,
)
from core.flows.review_chat.constants import CATEGORY_LABELS, REVIEW_ITEM_CATEGORIES, answer_bound_errors
from core.flows.review_chat.models import ReviewRecord
from core.flows.review_chat.paragraphs import item_paragraph_numbers, parse_marked_answer_paragraphs
from core.flows.review_chat.records import review_record_errors
from core.text.safe import DOCUMENT_MAX_CHARS, FIELD_MAX_CHARS, clean_text, safe_text

TITLE_CHARS = 40
ITEM_KEYS = ("title", "description", "paragraph_numbers", "paragraph_number")


@dataclass
class ItemDraft:
    """One review item: its list (strengths, weaknesses, important_points, future_considerations), texts,
    cited paragraph numbers, and any other keys an imported item carried (kept as they were)."""

    category: str
    title: str = ""
    description: str = ""
    paragraph_numbers: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class MaterialDraft:
    """The form: question, answer paragraphs, optional 出題趣旨 / 採点実感, overall review and items."""

    question_text: str = ""
    paragraphs: list[str] = field(default_factory=list)
    purpose_text: str = ""
    grading_impression_text: str = ""
    overall_review: str = ""
    items: list[ItemDraft] = field(default_factory=list)
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # other review JSON keys (e.g. score), kept


def default_title(draft: MaterialDraft) -> str:
    """The title typed, else the question's first line (up to 40 characters)."""
    if draft.title.strip():
        return draft.title.strip()
    first = next((line.strip() for line in draft.question_text.splitlines() if line.strip()), "")
    return first[:TITLE_CHARS] or "無題の答案"


def item_label(items: list[ItemDraft], index: int) -> str:
    """「改善点 2件目」: an item named by its list and its place in that list."""
    item = items[index]
    place = sum(1 for other in items[: index + 1] if other.category == item.category)
    return f"{CATEGORY_LABELS.get(item.category, item.category)} {place}件目"


def _item_errors(draft: MaterialDraft) -> list[str]:
    errors: list[str] = []
    count = len(draft.paragraphs)
    for index, item in enumerate(draft.items):
        label = item_label(draft.items, index)
        if item.category not in REVIEW_ITEM_CATEGORIES:
            errors.append(f"{label}: 講評の種類「{item.category}」はありません。")
        if not item.title.strip() and not item.description.strip():
            errors.append(f"{label}: 見出しか内容を入力してください。")
        outside = [n for n in item.paragraph_numbers if not 1 <= n <= count]
        if outside:
            labels = "、".join(f"§{n}" for n in outside)
            errors.append(f"{label}: {labels} は答案にありません（答案は §1～§{count}）。")
    return errors


def clean_draft(draft: MaterialDraft) -> tuple[MaterialDraft, bool]:
    """The form with every text made safe for storage (core.text.safe), and whether that changed what was typed
    (the page then says 「制御文字を取り除きました」)."""
    changed = False

    def clean(text: str) -> str:
        nonlocal changed
        out, was_changed = clean_text(text)
        changed |= was_changed
        return out

    items = [replace(i, title=clean(i.title), description=clean(i.description)) for i in draft.items]
    cleaned = replace(
        draft,
        question_text=clean(draft.question_text),
        paragraphs=[clean(p) for p in draft.paragraphs],
        purpose_text=clean(draft.purpose_text),
        grading_impression_text=clean(draft.grading_impression_text),
        overall_review=clean(draft.overall_review),
        title=clean(draft.title),
        items=items,
    )
    return cleaned, changed


def _length_errors(draft: MaterialDraft) -> list[str]:
    fields = (
        ("問題文", draft.question_text, DOCUMENT_MAX_CHARS),
        ("出題趣旨", draft.purpose_text, DOCUMENT_MAX_CHARS),
        ("採点実感", draft.grading_impression_text, DOCUMENT_MAX_CHARS),
        ("全体講評", draft.overall_review, FIELD_MAX_CHARS),
    )
    errors = [e for label, text, limit in fields if (e := safe_text(text, label, limit).error)]
    chars = sum(len(p) for p in draft.paragraphs)
    return errors + answer_bound_errors(len(draft.paragraphs), chars)


def check_draft(draft: MaterialDraft) -> list[str]:
    """Every problem of the form, in Japanese, in the order of the form (empty when it can be saved)."""
    errors: list[str] = _length_errors(draft)
    if errors:
        return errors
    if not draft.question_text.strip():
        errors.append("問題文を入力してください。")
    if not any(p.strip() for p in draft.paragraphs):
        errors.append("答案を貼り付けてください。")
    elif not marked_round_trip(draft.paragraphs):
        errors.append("答案の段落を $$[N] 形式で保存できません（段落の区切りを確認してください）。")
    if not draft.overall_review.strip():
        errors.append("全体講評を入力してください。")
    errors.extend(_item_errors(draft))
    if not errors:
        errors.extend(review_record_errors(build_record(draft).to_json_dict()))
    return errors


def _item_json(item: ItemDraft) -> dict[str, Any]:
    data: dict[str, Any] = dict(item.extra)
    if item.title.strip():
        data["title"] = item.title.strip()
    if item.description.strip():
        data["description"] = item.description.strip()
    data["paragraph_numbers"] = sorted(set(item.paragraph_numbers))
    return data


def build_review_json(draft: MaterialDraft) -> dict[str, Any]:
    """The review JSON: overall_review, the other keys kept from an import, then the four item lists."""
    review: dict[str, Any] = {"overall_review": draft.overall_review.strip(), **draft.extra}
    for category in REVIEW_ITEM_CATEGORIES:
        review[category] = [_item_json(i) for i in draft.items if i.category == category]
    return review


def build_record(draft: MaterialDraft) -> ReviewRecord:
    """The record to store: the `$$[N]`-marked answer and the review JSON (check with `check_draft` first)."""
    return ReviewRecord(
        title=default_title(draft),
        question_text=draft.question_text.strip(),
        purpose_text=draft.purpose_text.strip(),
        grading_impression_text=draft.grading_impression_text.strip(),
        answer_text=marked_answer([p.strip() for p in draft.paragraphs]),
        review_json=build_review_json(draft),
    )


def draft_from_record(record: ReviewRecord) -> MaterialDraft:
    """A stored review as a form to edit. Paragraphs are renumbered 1..n in answer order and the items'
    numbers with them; numbers citing no paragraph of the answer are dropped."""
    parsed = parse_marked_answer_paragraphs(record.answer_text)
    renumber = {old: new for new, (old, _) in enumerate(parsed, start=1)}
    review = record.review_json
    items: list[ItemDraft] = []
    for category in REVIEW_ITEM_CATEGORIES:
        for raw in review.get(category) or []:
            if not isinstance(raw, dict):
                continue
            numbers = sorted({renumber[n] for n in item_paragraph_numbers(raw) if n in renumber})
            extra = {k: v for k, v in raw.items() if k not in ITEM_KEYS}
            items.append(
                ItemDraft(
                    category, str(raw.get("title", "")), str(raw.get("description", "")), numbers, extra
                )
            )
    return MaterialDraft(
        question_text=record.question_text,
        paragraphs=[text for _, text in parsed],
        purpose_text=record.purpose_text,
        grading_impression_text=record.grading_impression_text,
        overall_review=str(review.get("overall_review", "")),
        items=items,
        title=record.title,
        extra={k: v for k, v in review.items() if k != "overall_review" and k not in REVIEW_ITEM_CATEGORIES},
    )


def _renumbered(draft: MaterialDraft, paragraphs: list[str], mapping: dict[int, int]) -> MaterialDraft:
    items = [
        replace(item, paragraph_numbers=sorted({mapping.get(n, n) for n in item.paragraph_numbers}))
        for item in draft.items
    ]
    return replace(draft, paragraphs=paragraphs, items=items)


def merge_paragraphs(draft: MaterialDraft, number: int) -> MaterialDraft:
    """§`number` merged with the next paragraph; items citing either cite the merged one, later ones shift."""
    merged = merge_with_next(draft.paragraphs, number)
    if merged == draft.paragraphs:
        return draft
    mapping = {n: n - 1 for n in range(number + 1, len(draft.paragraphs) + 1)}
    return _renumbered(draft, merged, mapping)


def split_paragraph(draft: MaterialDraft, number: int, line: int) -> MaterialDraft:
    """§`number` split before its line `line`; items keep citing §`number`, later paragraphs shift by one."""
    split = split_at_line(draft.paragraphs, number, line)
    if split == draft.paragraphs:
        return draft
    mapping = {n: n + 1 for n in range(number + 1, len(draft.paragraphs) + 1)}
    return _renumbered(draft, split, mapping)


def with_paragraphs(draft: MaterialDraft, paragraphs: list[str]) -> tuple[MaterialDraft, list[int]]:
    """The draft with a new split of the answer (pasted again); item numbers past the new end are dropped and
    returned (so the page can say which ones)."""
    dropped = sorted({n for i in draft.items for n in i.paragraph_numbers if n > len(paragraphs)})
    items = [
        replace(i, paragraph_numbers=[n for n in i.paragraph_numbers if n <= len(paragraphs)])
        for i in draft.items
    ]
    return replace(draft, paragraphs=list(paragraphs), items=items), dropped
