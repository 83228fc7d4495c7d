"""Japanese for the app's internal words, at display time: flow ids, call steps, results and error types,
local repairs, injected faults and other notes, validator messages, finish reasons, phases, modes and actions.

Every page shows these words through here. The raw values stay where raw values belong: the exports (JSONL,
CSV, OTLP) and the views labelled as raw (生の出力, JSON).
"""

from __future__ import annotations

import re

from core.guard.error_texts import ERROR_TYPE_LABELS, translate_errors
from core.settings import provider_label

FLOWS = {
    "knowledge": "ナレッジ聞き取り",
    "review": "答案レビュー",
    "memory": "コンパニオン記憶",
    "diagnosis": "車両診断",
}
# Names of the LLM calls (request tags["step"]) as staff read them.
STEPS = {
    "interview_turn": "聞き取りのターン",
    "chat": "返答",
    "reply": "返答",
    "summary": "会話の要約",
    "summarize": "会話の要約",
    "reflection": "内省",
    "extract_entities": "人物・関係の抽出",
    "extract_facts": "事実の抽出",
    "extract_loops": "約束の抽出",
    "extract_all": "人物・事実・約束の抽出",
    "summary_bond": "関係のサマリー",
    "summary_person": "人物のサマリー",
    "summary_topic": "話題のサマリー",
    "diagnosing": "問診の質問・回答",
    "spec_check": "仕様確認",
    "urgency_check": "緊急度の判定",
    "rag_answer": "取扱説明書の要約",
    "diagnosis_step": "問診の1回の応答",
    "continue": "続きの生成",
}
RESULTS = {"ok": "成功", "error": "失敗", **ERROR_TYPE_LABELS}
FIXES = {
    "strip_bom": "先頭のBOMを除去",
    "code_fence": "コードブロックの囲みを除去",
    "extract_from_prose": "前後の文章からJSONを取り出し",
    "strip_comments": "コメントを除去",
    "trailing_commas": "末尾のカンマを除去",
}
FAULTS = {
    "code_fence": "コードブロックで囲む",
    "prose": "前後に文章を足す",
    "trailing_comma": "末尾にカンマを足す",
    "missing_field": "必須項目を抜く",
    "wrong_enum": "選択肢にない値にする",
    "truncated": "途中で切る",
    "timeout": "タイムアウト",
    "rate_limit": "回数制限（429）",
    "server_error": "サーバーエラー（5xx）",
}
FINISH_REASONS = {
    "stop": "完了",
    "length": "長さの上限で停止",
    "content_filter": "コンテンツフィルターで停止",
    "tool_calls": "ツール呼び出し",
    "refusal": "回答拒否",
}
EVENT_KINDS = {"call": "呼び出し", "error": "エラー", "note": "メモ", "repair": "修復", "result": "結果"}
PHASES = {
    "collect_case": "事例の聞き取り",
    "organize_risks": "リスクの整理",
    "draft_knowledge": "ナレッジの下書き",
    "review_knowledge": "ナレッジの確認",
}
MODES = {"interview": "聞き取り中", "clarify": "確認中", "finalize": "まとめ"}
ACTIONS = {
    "ask_question": "質問",
    "clarify_term": "用語の確認",
    "provide_answer": "回答",
    "escalate": "入庫の案内",
    "spec_answer": "仕様の説明",
}
URGENCY = {"none": "なし", "low": "低", "medium": "中", "high": "高", "critical": "緊急"}
_NOTE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^fault injected: (\w+)$"), "障害注入: {fault}"),
)
_WORD = re.compile(r"[A-Za-z_]+")


def flow(name: str | None) -> str:
    """「コンパニオン記憶」 for memory; an unknown flow as it is ("-" for none)."""
    return FLOWS.get(name or "", name or "-")


def step(name: str | None) -> str:
    return STEPS.get(name or "", name or "呼び出し")


def result(value: str | None) -> str:
    """The outcome of a call: 成功, or the error type in words."""
    return RESULTS.get(value or "", value or "-")


def fix(name: str) -> str:
    return FIXES.get(name, name)


def fixes(names: list[str] | tuple[str, ...] | str) -> str:
    """Local repairs as a Japanese list (a CSV-like "a, b" string is split first)."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    return "、".join(fix(n) for n in items if n)


def finish_reason(value: str | None) -> str:
    return FINISH_REASONS.get(value or "", value or "-")


def phase(value: str | None) -> str:
    return PHASES.get(value or "", value or "-")


def mode(value: str | None) -> str:
    return MODES.get(value or "", value or "-")


def action(value: str | None) -> str:
    return ACTIONS.get(value or "", value or "-")


def provider(value: str | None) -> str:
    return provider_label(value) if value else "-"


def note(text: str) -> str:
    """A note the code wrote in English (「fault injected: missing_field」) in Japanese; others as they are."""
    for pattern, template in _NOTE_PATTERNS:
        m = pattern.match(text.strip())
        if m:
            return template.format(fault=FAULTS.get(m.group(1), m.group(1)))
    return text


def notes(text: str, sep: str = " / ") -> str:
    return sep.join(note(part) for part in text.split(sep)) if text else text


def validator_errors(errors: list[str]) -> list[str]:
    """Schema and parser messages (`$: 'loops' is a required property`) in Japanese."""
    return translate_errors(errors)


def any_word(value: str) -> str:
    """A value of any of the vocabularies above, else the value itself (for columns that mix them)."""
    for table in (FLOWS, STEPS, RESULTS, FIXES, FINISH_REASONS, PHASES, MODES, ACTIONS):
        if value in table:
            return table[value]
    return value


def internal_words(text: str) -> list[str]:
    """The ASCII words of `text` (what a check for untranslated internal words looks at)."""
    return _WORD.findall(text)
