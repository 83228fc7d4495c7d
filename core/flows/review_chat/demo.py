"""Demo persona for the review chat: answers only from the blocks it was given (offline, deterministic).

It quotes the named paragraph and the review items that cite it, quotes 出題趣旨 / 採点実感 when they were
sent, and ends with spec 02's closing sentence when asked about a place in the answer without Specified.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.flows.review_chat.constants import (
    CATEGORY_LABELS,
    HEADER_GRADING,
    HEADER_OVERALL,
    HEADER_PURPOSE,
    HEADER_QUESTION,
    HEADER_RELATED,
    HEADER_SPECIFIED,
    HEADER_SUMMARY,
    NOT_FOUND_SENTENCE,
    STEP_SUMMARIZE,
)
from core.flows.review_chat.paragraphs import (
    extract_paragraph_numbers_from_user_input,
    item_paragraph_numbers,
)
from core.flows.review_chat.summary import SPEAKERS
from core.llm.base import LLMRequest

DEMO_PREFIX = "（デモモデルの応答）"
HEADERS = (HEADER_QUESTION, HEADER_OVERALL, HEADER_PURPOSE, HEADER_GRADING, HEADER_SPECIFIED, HEADER_RELATED)
QUESTION_PREFIX = "ユーザーの質問:"
# Words that mean "a place in the answer or the review" when no § number was given.
LOCATION_WORDS = (
    "段落",
    "この部分",
    "この箇所",
    "該当箇所",
    "ここ",
    "この記述",
    "この論証",
    "この当てはめ",
    "答案の",
)
_PARAGRAPH_LINE = re.compile(r"^§(\d+) (.*)$")


def split_blocks(context_text: str) -> dict[str, str]:
    """Context text -> {header: body} for the known headers."""
    blocks: dict[str, str] = {}
    current: str | None = None
    for line in context_text.splitlines():
        if line in HEADERS:
            current = line
            blocks[current] = ""
        elif current is not None:
            blocks[current] += line + "\n"
    return {k: v.strip() for k, v in blocks.items()}


def first_sentence(text: str, limit: int = 90) -> str:
    """The first sentence (or the first `limit` characters) of a text, on one line."""
    text = " ".join(text.split())
    end = text.find("。")
    return text[: end + 1] if 0 <= end < limit else text[:limit] + ("…" if len(text) > limit else "")


def excerpt(text: str, limit: int = 120) -> str:
    """Whole sentences of a paragraph up to about `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind("。", 0, limit)
    return text[: cut + 1] if cut > 0 else text[:limit] + "…"


def _specified_paragraphs(body: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for line in body.splitlines() if (m := _PARAGRAPH_LINE.match(line))}


def _related_items(body: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        grouped = json.loads(body)
    except ValueError:
        return []
    if not isinstance(grouped, dict):
        return []
    return [
        (c, i)
        for c, items in grouped.items()
        if isinstance(items, list)
        for i in items
        if isinstance(i, dict)
    ]


def _focus(
    asked: list[int], paragraphs: dict[int, str], related: list[tuple[str, dict[str, Any]]]
) -> list[int]:
    """The paragraphs to talk about: the ones asked for, else the ones the related items cite, else the middle."""
    focus = [n for n in asked if n in paragraphs]
    if not focus:
        cited = sorted({n for _, item in related for n in item_paragraph_numbers(item)})
        focus = [n for n in cited if n in paragraphs][:2]
    if not focus and paragraphs:
        numbers = sorted(paragraphs)
        focus = [numbers[len(numbers) // 2]]
    return focus[:3]


def _labels(numbers: list[int]) -> str:
    return "、".join(f"§{n}" for n in numbers)


def _item_line(category: str, item: dict[str, Any], cites: bool = False) -> str:
    label = CATEGORY_LABELS.get(category, category)
    where = f"（{_labels(item_paragraph_numbers(item))}）" if cites else ""
    return f"- **{label}: {item.get('title', '')}**{where} — {first_sentence(str(item.get('description', '')), 120)}"


def _rewrite_hint(items: list[tuple[str, dict[str, Any]]]) -> list[str]:
    weak = next((i for c, i in items if c == "weaknesses"), None)
    if weak is None:
        return []
    return ["", f"次の答案では、「{weak.get('title', '')}」の指摘を意識して書き直してみてください。"]


def _without_direct_items(
    focus: list[int], paragraphs: dict[int, str], related: list[tuple[str, dict[str, Any]]], overall: str
) -> list[str]:
    """No review item names the paragraph: the overall review, then the neighbouring paragraphs and their items."""
    lines = ["", f"{_labels(focus) or '指定された段落'} を直接挙げた講評項目はありません。"]
    if overall:
        lines.append(f"全体講評では、「{first_sentence(overall, 120)}」とまとめられています。")
    if not related:
        lines.append("前後の段落にも講評項目はないため、全体講評の指摘と照らして読んでください。")
        return lines
    cited = sorted({n for _, item in related for n in item_paragraph_numbers(item)} & set(paragraphs))
    near = sorted(cited, key=lambda n: min(abs(n - f) for f in focus) if focus else n)[:2]
    lines += ["", f"前後の段落（{_labels(sorted(near))}）とその講評を示します。"]
    for n in sorted(near):
        lines += ["", f"**§{n} の記述**", f"> {excerpt(paragraphs[n])}"]
    lines += ["", "前後の段落への講評:"]
    lines += [_item_line(category, item, cites=True) for category, item in related[:3]]
    return lines + _rewrite_hint(related)


def reply_text(request: LLMRequest) -> str:
    """The demo reply to one review-chat turn."""
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    context = split_blocks(users[0]) if users else {}
    question = users[-1].removeprefix(QUESTION_PREFIX).strip() if users else ""
    has_summary = any(u.startswith(HEADER_SUMMARY) for u in users)
    lines = [DEMO_PREFIX]
    if has_summary:
        lines.append("これまでの会話の要約も踏まえてお答えします。")
    specified = context.get(HEADER_SPECIFIED)
    if specified is not None:
        paragraphs = _specified_paragraphs(specified)
        related = _related_items(context.get(HEADER_RELATED, ""))
        asked = extract_paragraph_numbers_from_user_input(question)
        focus = _focus(asked, paragraphs, related)
        if not asked:
            lines.append("直前のご質問で指定された段落の周辺を、引き続き参照しています。")
        for n in focus:
            lines += ["", f"**§{n} の記述**", f"> {excerpt(paragraphs[n])}"]
        direct = [(c, i) for c, i in related if set(item_paragraph_numbers(i)) & set(focus)]
        if direct:
            lines += ["", "講評では、この段落について次のように述べています。"]
            lines += [_item_line(category, item) for category, item in direct[:3]]
            lines += _rewrite_hint(direct)
        else:
            lines += _without_direct_items(focus, paragraphs, related, context.get(HEADER_OVERALL, ""))
    if HEADER_PURPOSE in context:
        lines += ["", f"**出題趣旨**では、「{first_sentence(context[HEADER_PURPOSE], 120)}」とされています。"]
    if HEADER_GRADING in context:
        lines += [
            "",
            f"**採点実感**では、「{first_sentence(context[HEADER_GRADING], 120)}」と指摘されています。",
        ]
    if specified is None and HEADER_PURPOSE not in context and HEADER_GRADING not in context:
        overall = context.get(HEADER_OVERALL, "")
        lines += ["", f"全体講評では、「{first_sentence(overall, 120)}」とまとめられています。"]
        lines.append("答案の特定の段落について知りたいときは、§番号（例: §7）を付けて質問してください。")
    if specified is None and any(word in question for word in LOCATION_WORDS):
        lines += ["", NOT_FOUND_SENTENCE]
    return "\n".join(lines)


_SPEAKER_SPLIT = re.compile(r"^(【ユーザー】|【アシスタント】)$", re.M)
_CITED_TITLE = re.compile(r"^- \*\*[^:*]+: ([^*]+)\*\*(?:（[^）]*）)? — ", re.M)


def _segment_messages(prompt: str) -> list[tuple[str, str]]:
    """(speaker, text) pairs of the transcript inside the summarize prompt."""
    parts = _SPEAKER_SPLIT.split(prompt)
    pairs = []
    for i in range(1, len(parts) - 1, 2):
        text = parts[i + 1].strip().removesuffix("---").strip()
        pairs.append((parts[i], text))
    return pairs


def summary_text(request: LLMRequest) -> str:
    """The demo summary of a conversation segment (questions, answers given, open points)."""
    prompt = request.messages[-1]["content"] if request.messages else ""
    pairs = _segment_messages(prompt)
    questions = [first_sentence(t, 40) for s, t in pairs if s == SPEAKERS["user"]]
    answers = [t for s, t in pairs if s == SPEAKERS["assistant"]]
    cited = list(dict.fromkeys(title for a in answers for title in _CITED_TITLE.findall(a)))
    sources = [name for name in ("出題趣旨", "採点実感") if any(f"**{name}**" in a for a in answers)]
    asked = "、".join(f"「{q}」" for q in questions) or "（なし）"
    used = "、".join([*(f"講評「{t}」" for t in cited[:4]), *sources]) or "全体講評"
    last = f"「{questions[-1]}」" if questions else "直前の質問"
    return "\n".join(
        [
            f"- 疑問・観点: {asked}",
            f"- 行った回答: {used}を引用し、答案の該当段落と照らして説明した。",
            f"- 残っている論点: {last}に関連して、規範の立て方と当てはめの具体化をさらに確認する余地がある。",
            "（デモモデルによる要約）",
        ]
    )


def review_persona(request: LLMRequest) -> str:
    """The demo model's part in the review chat (reply or summary, by the step tag)."""
    if request.tags.get("step") == STEP_SUMMARIZE:
        return summary_text(request)
    return reply_text(request)
