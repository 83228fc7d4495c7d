"""Failures a person understands: one plain Japanese sentence per error type, and the
parser and schema messages translated for the common cases (required, enum, type, additionalProperties,
const; JSON syntax), kept as they were otherwise. The error card (pages/ui/shell/error_card.py) shows the sentence
and folds the rest under 「詳細」.
"""

from __future__ import annotations

import re

# The one sentence shown for a failed reply, by the guard's error type.
PLAIN_SENTENCES = {
    "provider_error": "AIサービスに接続できなかったため、応答を受け取れませんでした。少し待ってから再試行してください。",
    "parse_error": "AIの応答を読み取れませんでした。再試行してください。",
    "schema_error": "AIの応答が決められた形になっていませんでした。再試行してください。",
    "truncated": "AIの応答が途中で途切れました。再試行してください。",
    "refusal": "AIがこの依頼への回答を控えました。言い方を変えて、もう一度お試しください。",
    "empty_output": "AIから応答がありませんでした。再試行してください。",
    "unexpected_error": "予期しないエラーが発生しました。入力内容は残っています。再試行してください。",
}
DEFAULT_SENTENCE = "応答を受け取れませんでした。再試行してください。"
ERROR_TYPE_LABELS = {
    "parse_error": "JSONとして読めない出力",
    "schema_error": "スキーマ違反",
    "truncated": "出力が途中で切れた",
    "refusal": "回答拒否",
    "empty_output": "空の出力",
    "provider_error": "LLM呼び出しエラー",
    "unexpected_error": "予期しないエラー",
}

_POSITION = r"line (\d+) column (\d+) \(char \d+\)"
_JSON_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^Expecting value: {_POSITION}$"), "JSONの値がありません（{0}行{1}列目）"),
    (re.compile(rf"^Expecting '(.)' delimiter: {_POSITION}$"), "区切りの「{0}」がありません（{1}行{2}列目）"),
    (
        re.compile(rf"^Expecting property name enclosed in double quotes: {_POSITION}$"),
        "項目名がダブルクォートで囲まれていません（{0}行{1}列目）",
    ),
    (
        re.compile(rf"^Unterminated string starting at: {_POSITION}$"),
        "文字列が閉じていません（{0}行{1}列目から）",
    ),
    (re.compile(rf"^Extra data: {_POSITION}$"), "JSONの後に余分な文字があります（{0}行{1}列目）"),
    (
        re.compile(rf"^Invalid control character at: {_POSITION}$"),
        "文字列に制御文字があります（{0}行{1}列目）",
    ),
)
_SCHEMA_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^'(.+)' is a required property$"), "必須項目「{0}」がありません"),
    (re.compile(r"^(.+) is not one of \[(.*)\]$"), "値 {0} は選べる値（{1}）のどれでもありません"),
    (re.compile(r"^(.+) is not of type (.+)$"), "値 {0} の型が違います（{1} である必要があります）"),
    (
        re.compile(r"^Additional properties are not allowed \((.+) (?:was|were) unexpected\)$"),
        "想定されていない項目 {0} があります",
    ),
    (re.compile(r"^(.+) was expected$"), "値は {0} である必要があります"),
)
_TYPE_NAMES = {
    "'string'": "文字列",
    "'integer'": "整数",
    "'number'": "数値",
    "'boolean'": "真偽値",
    "'object'": "オブジェクト",
    "'array'": "配列",
    "'null'": "null",
}


def plain_sentence(error_type: str | None) -> str:
    """The one sentence a person reads for a failed reply of this type."""
    return PLAIN_SENTENCES.get(error_type or "", DEFAULT_SENTENCE)


def _types(text: str) -> str:
    return re.sub(r"'[a-z]+'", lambda m: _TYPE_NAMES.get(m.group(), m.group()), text)


def _location(path: str) -> str:
    """`$.a.b[0]` -> 「a.b[0]」; the root -> 「全体」."""
    path = path.strip()
    return "全体" if path in ("$", "") else path.removeprefix("$.").removeprefix("$")


def translate_error(message: str) -> str:
    """A parser or schema message in Japanese (`$.path: message` keeps its path as 「場所: 」); messages
    of other validators stay as they are."""
    path, sep, body = message.partition(": ")
    if sep and path.startswith("$"):
        return f"{_location(path)}: {_translate_body(body)}"
    return _translate_body(message)


def _translate_body(body: str) -> str:
    for pattern, template in _JSON_MESSAGES:
        m = pattern.match(body)
        if m:
            return template.format(*m.groups())
    for pattern, template in _SCHEMA_MESSAGES:
        m = pattern.match(body)
        if m:
            groups = [_types(g) if "type" in pattern.pattern else g for g in m.groups()]
            return template.format(*groups)
    return body


def translate_errors(messages: list[str]) -> list[str]:
    """translate_error for each message, duplicates dropped (a 5xx named once)."""
    return list(dict.fromkeys(translate_error(m) for m in messages if m))
