"""spec 02 検出対象 / Specified / Related: table-driven tests for every rule, plus Hypothesis robustness."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.flows.review_chat import (
    extract_paragraph_numbers_from_user_input,
    extract_specified_text_from_answer,
    get_related_review_json_items,
    parse_marked_answer_paragraphs,
)


def marked(n: int) -> str:
    return "\n".join(f"$$[{i}] 本文{i}" for i in range(1, n + 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("§3について", [3]),
        ("第7段落の評価は？", [7]),
        ("§12と§3、第5段落", [3, 5, 12]),
        ("§3 と §3 と第3段落", [3]),  # unique
        ("§３の部分", [3]),  # full-width digit (IME)
        ("第１２段落", [12]),
        ("§１2", [12]),  # mixed widths in one number
        ("§10。§2", [2, 10]),  # ascending
        ("答案の§100", [100]),
        ("§0", [0]),
    ],
)
def test_detection_positives(text: str, expected: list[int]) -> None:
    assert extract_paragraph_numbers_from_user_input(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "§ 3について",  # space after §
        "§　3",  # full-width space
        "¶3",  # pilcrow is not a marker
        "第 7 段落",  # spaces inside 第N段落
        "第7段",  # not 段落
        "7段落",  # no 第
        "段落3",
        "S3",
        "§",
        "§三",  # kanji numerals are not digits here
        "第七段落",
        "",
        "§1234567",  # longer than any paragraph number
    ],
)
def test_detection_negatives(text: str) -> None:
    assert extract_paragraph_numbers_from_user_input(text) == []


def test_parse_marked_answer_multiline_and_preamble() -> None:
    text = "前置き（段落外）\n$$[1] 一行目\n続き\n\n$$[2]二\n  $$[3] 三\n$$[x] 目印ではない"
    assert parse_marked_answer_paragraphs(text) == [
        (1, "一行目\n続き"),
        (2, "二"),
        (3, "三\n$$[x] 目印ではない"),
    ]


def test_parse_marked_answer_without_markers() -> None:
    assert parse_marked_answer_paragraphs("目印のない答案\n二行目") == []
    assert parse_marked_answer_paragraphs("") == []


def lines(numbers: list[int | str]) -> str:
    return "\n".join(n if isinstance(n, str) else f"§{n} 本文{n}" for n in numbers)


@pytest.mark.parametrize(
    ("total", "asked", "expected"),
    [
        (20, [10], lines(list(range(5, 16)))),  # N-5..N+5
        (20, [2], lines(list(range(1, 8)))),  # clamped at the start
        (20, [19], lines(list(range(14, 21)))),  # clamped at the end
        (4, [2], lines([1, 2, 3, 4])),  # both ends
        (30, [3, 6], lines(list(range(1, 12)))),  # overlapping ranges merged
        (30, [3, 14], lines(list(range(1, 20)))),  # touching ranges (8 | 9) merged, no gap line
        (30, [3, 15], lines([*range(1, 9), "……", *range(10, 21)])),  # one-paragraph gap
        (40, [3, 20, 36], lines([*range(1, 9), "……", *range(15, 26), "……", *range(31, 41)])),
        (20, [15, 3], lines([*range(1, 9), "……", *range(10, 21)])),  # order of N does not matter
        (20, [40], ""),  # outside the answer
        (20, [26], ""),  # 21..31 does not touch the answer
        (20, [25], lines([20])),  # window reaches the last paragraph
    ],
)
def test_specified_window_merge_and_gaps(total: int, asked: list[int], expected: str) -> None:
    assert extract_specified_text_from_answer(marked(total), asked) == expected


def test_specified_gap_line_only_between_ranges() -> None:
    text = extract_specified_text_from_answer(marked(60), [3, 20, 40, 58])
    out = text.splitlines()
    assert out.count("……") == 3
    assert out[0] != "……" and out[-1] != "……"
    assert all(not (a == "……" and b == "……") for a, b in itertools.pairwise(out))


def test_specified_keeps_multiline_paragraphs_and_labels() -> None:
    answer = "$$[1] 第1\n二行目\n$$[2] 第2"
    assert extract_specified_text_from_answer(answer, [1]) == "§1 第1\n二行目\n§2 第2"


def test_specified_custom_window() -> None:
    assert extract_specified_text_from_answer(marked(20), [10], window=1) == lines([9, 10, 11])


REVIEW = {
    "overall_review": "全体",
    "strengths": [{"title": "s1", "paragraph_numbers": [2, 3]}, {"title": "s2", "paragraph_number": 9}],
    "weaknesses": [
        {"title": "w1", "paragraph_number": 3},
        {"title": "w2", "paragraph_numbers": [4], "paragraph_number": 3},
        {"title": "s1", "paragraph_numbers": [2, 3]},  # same content as strengths[0]
    ],
    "important_points": [{"title": "i1", "paragraph_numbers": []}, {"title": "i2"}, "not an item"],
    "future_considerations": [{"title": "f1", "paragraph_numbers": [9, 3]}],
    "other": [{"title": "x", "paragraph_number": 3}],
}


@pytest.mark.parametrize(
    ("numbers", "titles"),
    [
        ([3], ["s1", "w1", "w2", "f1"]),  # dedupe, review order, both fields, unknown lists ignored
        ([4], ["w2"]),
        ([9], ["s2", "f1"]),
        ([2, 9], ["s1", "s2", "f1"]),
        ([3, 9], ["s1", "s2", "w1", "w2", "f1"]),  # an item matching two numbers appears once
        ([7], []),
        ([], []),
    ],
)
def test_related_items(numbers: list[int], titles: list[str]) -> None:
    assert [i["title"] for i in get_related_review_json_items(REVIEW, numbers)] == titles


@pytest.mark.parametrize(
    "review", [None, [], "text", {"strengths": "no list"}, {"strengths": [{"paragraph_number": "3"}]}]
)
def test_related_items_tolerates_odd_reviews(review: object) -> None:
    assert get_related_review_json_items(review, [3]) == []


def test_related_item_with_bool_is_not_a_number() -> None:
    assert get_related_review_json_items({"strengths": [{"paragraph_number": True}]}, [1]) == []


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_detection_never_raises(text: str) -> None:
    numbers = extract_paragraph_numbers_from_user_input(text)
    assert numbers == sorted(set(numbers))
    assert all(isinstance(n, int) and n >= 0 for n in numbers)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("§第段落0123456789０１２３ 　¶\n$[]x"))))
def test_detection_never_raises_on_marker_soup(text: str) -> None:
    extract_paragraph_numbers_from_user_input(text)
    parse_marked_answer_paragraphs(text)
    extract_specified_text_from_answer(text, [1, 5, 999999])
