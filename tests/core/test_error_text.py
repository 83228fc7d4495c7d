"""Failures a person understands (issue 12 item 5): plain sentences, translated parser and schema messages."""

from __future__ import annotations

import pytest

from core.contracts.schemas import validation_errors
from core.guard.error_texts import PLAIN_SENTENCES, plain_sentence, translate_error, translate_errors
from core.guard.local_repair import parse_json_locally

SCHEMA = {
    "type": "object",
    "properties": {
        "mode": {"enum": ["interview", "clarify"]},
        "count": {"type": "integer"},
        "version": {"const": 1},
        "action_plan": {"type": "string"},
    },
    "required": ["action_plan"],
    "additionalProperties": False,
}


def test_every_guard_error_type_has_one_plain_sentence() -> None:
    for error_type in (
        "parse_error",
        "schema_error",
        "truncated",
        "refusal",
        "empty_output",
        "provider_error",
    ):
        sentence = plain_sentence(error_type)
        assert (
            sentence == PLAIN_SENTENCES[error_type] and sentence.endswith("。") and error_type not in sentence
        )
    assert plain_sentence(None) and plain_sentence("something_new")


def test_common_validators_are_translated() -> None:
    errors = validation_errors(SCHEMA, {"mode": "finish", "count": "3", "version": 2, "extra": True})
    assert sorted(translate_errors(errors)) == sorted(
        [
            "全体: 想定されていない項目 'extra' があります",
            "全体: 必須項目「action_plan」がありません",
            "count: 値 '3' の型が違います（整数 である必要があります）",
            "mode: 値 'finish' は選べる値（'interview', 'clarify'）のどれでもありません",
            "version: 値は 1 である必要があります",
        ]
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "JSONの値がありません（1行1列目）"),
        ('{"a": 1', "区切りの「,」がありません（1行8列目）"),
        ("{'a': 1}", "項目名がダブルクォートで囲まれていません（1行2列目）"),
    ],
)
def test_json_parser_messages_are_translated(raw: str, expected: str) -> None:
    assert translate_error(parse_json_locally(raw).error) == expected


def test_unknown_messages_stay_and_duplicates_go() -> None:
    assert (
        translate_error("$.x: 3 is greater than the maximum of 2") == "x: 3 is greater than the maximum of 2"
    )
    assert translate_errors(["サーバーエラー（500）", "サーバーエラー（500）", ""]) == [
        "サーバーエラー（500）"
    ]
