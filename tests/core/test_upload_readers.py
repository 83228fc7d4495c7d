"""Upload readers never raise: the debug JSONL (import box and replay) and the review JSON import give Japanese
messages by line number for hostile files, and arbitrary JSON (Hypothesis) ends in a result or such a message."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents.json_bounds import nesting_depth, parse_bounded
from core.flows.review_chat.constants import MAX_ANSWER_PARAGRAPHS
from core.flows.review_chat.records import read_review_file
from core.workbench.log_import import read_debug_jsonl

BASE = {"flow": "review", "step": "reply", "kind": "call", "conversation_id": "1", "turn": 1}
PROPERTY = settings(max_examples=80, deadline=None)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {**BASE, "messages": "x"},
            "1行目: messages を「role と content（文字列）の組のリスト」にしてください。",
        ),
        ({**BASE, "raw": 5}, "1行目: raw を「文字列か null」にしてください。"),
        ({**BASE, "temperature": "hot"}, "1行目: temperature を「数値か null」にしてください。"),
        ({**BASE, "errors": [1]}, "1行目: errors を「文字列のリスト」にしてください。"),
        ({**BASE, "turn": "3"}, "1行目: turn を「0以上の整数」にしてください。"),
        ({**BASE, "conversation_id": ["a"]}, "1行目: conversation_id を「文字列」にしてください。"),
        ({**BASE, "call_id": ["a"]}, "1行目: call_id を「文字列」にしてください。"),
        ([1, 2], "1行目: JSONのオブジェクト（{…}）ではありません。"),
        (None, "1行目: JSONのオブジェクト（{…}）ではありません。"),
    ],
)
def test_each_hostile_line_is_a_japanese_message(line, message):
    assert read_debug_jsonl(json.dumps(line).encode()).errors == [message]


def test_deep_nesting_is_refused_before_parsing():
    deep = b"[" * 100_000 + b"]" * 100_000
    assert read_debug_jsonl(b'{"flow":"a","step":"b","kind":"c"}\n' + deep).errors == [
        "2行目: 入れ子が深すぎます（100,000 段。上限 64 段）。"
    ]
    assert nesting_depth('{"a": "[[[[", "b": [[1]]}') == 3


def test_a_good_line_reads_and_errors_are_capped():
    assert len(read_debug_jsonl(json.dumps(BASE).encode()).events) == 1
    errors = read_debug_jsonl(b"null\n" * 30).errors
    assert len(errors) == 11 and errors[-1] == "…ほか 20 件"
    assert read_debug_jsonl(b"\xff").errors == ["ファイルを UTF-8 のテキストとして読めませんでした。"]


def test_read_review_file_never_raises_on_nesting_or_surrogates():
    assert read_review_file(b"[" * 4096 + b"]" * 4096).errors == [
        "入れ子が深すぎます（4,096 段。上限 64 段）。"
    ]
    record = {
        "title": "\ud800題",
        "question_text": "問\x0b題",
        "answer_text": "$$[1] 答え",
        "review_json": {"overall_review": "よい", "strengths": [], "weaknesses": []},
    }
    check = read_review_file(json.dumps(record).encode())
    assert check.errors == [] and check.record is not None
    assert (check.record.title, check.record.question_text) == ("\ufffd題", "問\n題")


def test_an_imported_answer_over_the_paragraph_bound_is_refused():
    answer = "\n".join(f"$$[{n}] 段落" for n in range(1, MAX_ANSWER_PARAGRAPHS + 2))
    record = {
        "title": "t",
        "question_text": "q",
        "answer_text": answer,
        "review_json": {"overall_review": "o"},
    }
    assert read_review_file(json.dumps(record).encode()).errors == [
        "答案の段落が多すぎます（1,001 段落。上限は 1,000 段落です）。段落の区切りを確認するか、分けて登録してください。"
    ]


@PROPERTY
@given(st.lists(JSON, min_size=1, max_size=5))
def test_arbitrary_json_lines_read_or_give_line_numbered_japanese_messages(lines):
    result = read_debug_jsonl("\n".join(json.dumps(v) for v in lines).encode())
    assert bool(result.events) != bool(result.errors)
    assert all("行目: " in e or e.startswith("…ほか") for e in result.errors)


@PROPERTY
@given(
    JSON | st.fixed_dictionaries({"title": st.text(), "question_text": st.text(), "answer_text": st.text()})
)
def test_arbitrary_json_through_the_review_import_never_raises(value):
    check = read_review_file(json.dumps(value).encode())
    assert (check.record is None) == bool(check.errors)


@PROPERTY
@given(st.text(alphabet='[]{}"\\ a1,:', max_size=200))
def test_parse_bounded_never_raises(text):
    parsed = parse_bounded(text)
    assert parsed.error is None or parsed.error.endswith("。")
