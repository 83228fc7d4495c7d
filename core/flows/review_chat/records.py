"""Review records: the bundled sample and imported review JSON files (schemas/review_record.schema.json)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.contracts.schemas import is_valid, load_schema, validator_for
from core.documents.json_bounds import parse_bounded
from core.flows.review_chat.constants import REVIEW_ITEM_CATEGORIES, answer_bound_errors
from core.flows.review_chat.models import ReviewRecord
from core.flows.review_chat.paragraphs import item_paragraph_numbers, parse_marked_answer_paragraphs
from core.text.safe import safe_value

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "samples" / "review"
SAMPLE_KEY = "sample:civil-law-2026"
SCHEMA_NAME = "review_record"
MAX_IMPORT_BYTES = 2_000_000


def load_sample_review() -> ReviewRecord:
    """The bundled fictional exam: question, 出題趣旨, 採点実感, a marked answer and its review JSON."""

    def read(name: str) -> str:
        return (SAMPLE_DIR / name).read_text(encoding="utf-8").strip()

    return ReviewRecord(
        title=read("title.txt"),
        question_text=read("question.md"),
        purpose_text=read("purpose.md"),
        grading_impression_text=read("grading_impression.md"),
        answer_text=read("answer.txt"),
        review_json=json.loads(read("review.json")),
    )


@dataclass
class ImportCheck:
    """The outcome of reading a review file: the record when usable, problems and warnings in Japanese."""

    record: ReviewRecord | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


TYPE_NAMES = {
    "string": "文字列",
    "integer": "整数",
    "array": "配列",
    "object": "オブジェクト",
    "number": "数値",
}


def error_location(parts: Any) -> str:
    """A JSON path a staff member can read: `review_json › strengths › 1件目 › title`, or ファイル全体."""
    names = [f"{p + 1}件目" if isinstance(p, int) else str(p) for p in parts]
    return " › ".join(names) if names else "ファイル全体"


def _japanese_error(error: Any) -> str:
    path = error_location(error.absolute_path)
    kind = error.validator
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"{path}: 必須の項目「{missing}」がありません。"
    if kind == "type":
        expected = (
            error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        )
        return f"{path}: 型が違います（{'・'.join(TYPE_NAMES.get(str(t), str(t)) for t in expected)}にしてください）。"
    if kind == "minLength":
        return f"{path}: 空にはできません。"
    if kind == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"{path}: 決められていない項目があります（{'、'.join(extra)}）。"
    if kind == "anyOf":
        return f"{path}: 講評の項目には title か description が必要です。"
    if kind == "minimum":
        return f"{path}: {error.validator_value} 以上の数にしてください。"
    if kind == "uniqueItems":
        return f"{path}: 同じ段落番号が重複しています。"
    if kind == "maxLength":
        return f"{path}: {error.validator_value} 文字以内にしてください。"
    return f"{path}: {error.message}"


def review_record_errors(data: Any) -> list[str]:
    """Every schema problem of a review record, in Japanese, in a stable order."""
    if is_valid(load_schema(SCHEMA_NAME), data):
        return []
    errors = validator_for(load_schema(SCHEMA_NAME)).iter_errors(data)
    ordered = sorted(
        errors,
        key=lambda e: (
            [f"{p:09d}" if isinstance(p, int) else p for p in e.absolute_path],
            e.validator,
            e.message,
        ),
    )
    return [_japanese_error(e) for e in ordered]  # parents before their items, stable


def cited_paragraph_numbers(review_json: Any) -> list[int]:
    """Every paragraph number any review item cites."""
    numbers: set[int] = set()
    if isinstance(review_json, dict):
        for category in REVIEW_ITEM_CATEGORIES:
            items = review_json.get(category)
            for item in items if isinstance(items, list) else []:
                numbers.update(item_paragraph_numbers(item))
    return sorted(numbers)


_MARKER_LIKE = re.compile(r"^[ \t　]*[$＄]\s*[$＄]")
_VALID_MARKER = re.compile(r"^[ \t]*\$\$\[([0-9]{1,6})\]")
MARKER_PROBLEM = "answer_text: "


def marker_problems(answer_text: str) -> list[str]:
    """Problems with the `$$[N]` markers a reader would otherwise silently misread, in Japanese: a marker
    written another way, number 0, a number used twice, text before the first marker (it would be lost)."""
    problems: list[str] = []
    seen: set[int] = set()
    started = False
    for index, line in enumerate(answer_text.splitlines(), start=1):
        valid = _VALID_MARKER.match(line)
        if valid is None:
            if _MARKER_LIKE.match(line):
                shown = line.strip()[:12]
                problems.append(
                    f"{MARKER_PROBLEM}{index}行目の「{shown}」は段落の目印として読めません"
                    "（半角で $$[1] のように書いてください）。"
                )
            elif line.strip() and not started:
                problems.append(
                    f"{MARKER_PROBLEM}最初の $$[N] より前に文章があります（{index}行目）。"
                    "その文章はどの段落にも入らないため、先頭行を $$[1] で始めてください。"
                )
                started = True  # said once
            continue
        started = True
        number = int(valid.group(1))
        if number == 0:
            problems.append(
                f"{MARKER_PROBLEM}{index}行目: 段落番号は1から始めてください（$$[0] は使えません）。"
            )
        elif number in seen:
            problems.append(f"{MARKER_PROBLEM}{index}行目: 段落番号 $$[{number}] が2回使われています。")
        seen.add(number)
    return problems


def check_review_record(data: Any) -> ImportCheck:
    """Validate against the schema, then check the answer has `$$[N]` paragraphs; cited paragraphs missing from
    the answer are warnings (the chat still works, Specified just shows nothing for them).
    """
    errors = review_record_errors(data)
    if errors:
        return ImportCheck(errors=errors)
    bounds = answer_bound_errors(0, len(data["answer_text"]))
    if bounds:
        return ImportCheck(errors=bounds)
    paragraphs = parse_marked_answer_paragraphs(data["answer_text"])
    bounds = answer_bound_errors(len(paragraphs), 0)
    if bounds:
        return ImportCheck(errors=bounds)
    if not paragraphs:
        return ImportCheck(
            errors=[
                "answer_text: 段落の目印 $$[N] が1つもありません（各段落の先頭行を $$[1] のように始めてください）。"
            ]
        )
    problems = marker_problems(data["answer_text"])
    if problems:
        return ImportCheck(errors=problems)
    existing = {n for n, _ in paragraphs}
    warnings = []
    missing = [n for n in cited_paragraph_numbers(data["review_json"]) if n not in existing]
    if missing:
        labels = "、".join(f"§{n}" for n in missing)
        warnings.append(f"講評が答案にない段落 {labels} を参照しています。")
    record = ReviewRecord(
        title=data["title"],
        question_text=data["question_text"],
        purpose_text=data.get("purpose_text", ""),
        grading_impression_text=data.get("grading_impression_text", ""),
        answer_text=data["answer_text"],
        review_json=data["review_json"],
    )
    return ImportCheck(record, [], warnings)


def read_review_file(raw: bytes) -> ImportCheck:
    """An uploaded review file (UTF-8 JSON) -> record or a clear list of problems. Never raises: size, nesting
    depth (core.documents.json_bounds), schema, answer bounds; every string is made safe (core.text.safe) before the
    checks, so a lone surrogate or control character cannot fail them or the store."""
    if len(raw) > MAX_IMPORT_BYTES:
        return ImportCheck(errors=[f"ファイルが大きすぎます（上限 {MAX_IMPORT_BYTES // 1_000_000} MB）。"])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return ImportCheck(errors=["ファイルを UTF-8 のテキストとして読めませんでした。"])
    parsed = parse_bounded(text)
    if parsed.error is not None:
        return ImportCheck(errors=[parsed.error])
    try:
        return check_review_record(safe_value(parsed.value))
    except Exception as exc:  # noqa: BLE001 - the promise is "never raises": a bug here is a message, not a crash
        return ImportCheck(errors=[f"ファイルを確認できませんでした（{type(exc).__name__}）。"])
