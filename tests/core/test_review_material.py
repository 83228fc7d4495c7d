"""Your own review material (issue #13 item 1): the splitting rule, adjusting the split, the stored `$$[N]`
answer and review JSON the importer accepts, the form's Japanese problems, readable import problems."""

from __future__ import annotations

import json

import pytest

from core.flows.review_chat import (
    ItemDraft,
    build_record,
    check_draft,
    check_review_record,
    draft_from_record,
    extract_specified_text_from_answer,
    get_related_review_json_items,
    join_paragraphs,
    load_sample_review,
    marked_answer,
    merge_paragraphs,
    parse_marked_answer_paragraphs,
    read_review_file,
    split_answer,
    split_at_line,
    split_paragraph,
    with_paragraphs,
)
from core.flows.review_chat.answer_split import same_text
from tests.core.review_material_fixtures import PARAGRAPHS, PASTED, draft


def test_blank_lines_separate_paragraphs_and_keep_the_lines_of_one() -> None:
    assert split_answer(PASTED) == PARAGRAPHS
    assert split_answer("一行目\n続き\n\n\n  \n二段落目\n") == ["一行目\n続き", "二段落目"]


def test_without_blank_lines_every_line_is_a_paragraph() -> None:
    assert split_answer("第1　設問1\r\n本問では\r\n\r") == ["第1　設問1", "本問では"]
    assert split_answer("あ\nい\nう\n") == ["あ", "い", "う"]  # a trailing newline is not a blank line


def test_marked_text_is_split_at_its_markers_and_renumbered() -> None:
    assert split_answer("前書き\n$$[3] 三\n続き\n$$[7]七") == ["前書き", "三\n続き", "七"]


def test_pdf_radicals_are_repaired_and_nothing_else_changes() -> None:
    assert split_answer("⽉額の　ＡＢＣ\n\n２") == ["月額の　ＡＢＣ", "２"]


@pytest.mark.parametrize("text", [PASTED, "a\nb\n\nc", "$$[1] x\ny\n$$[2] z", "  \n一\n"])
def test_no_text_is_lost(text: str) -> None:
    paragraphs = split_answer(text)
    assert same_text(text, paragraphs)
    assert split_answer(join_paragraphs(paragraphs)) == paragraphs


def test_merge_and_split_adjust_the_paragraphs() -> None:
    assert split_at_line(["a\nb\nc", "d"], 1, 3) == ["a\nb", "c", "d"]
    assert split_at_line(["a\nb"], 1, 1) == ["a\nb"]  # line 1: nothing before it
    assert split_at_line(["a\nb"], 2, 2) == ["a\nb"]  # no §2
    assert merge_paragraphs(draft(), 12).paragraphs == PARAGRAPHS  # the last has no next


def test_merging_and_splitting_renumber_the_items() -> None:
    merged = merge_paragraphs(draft(), 3)  # §3 + §4 -> §3, §5.. -> §4..
    assert merged.paragraphs[2] == PARAGRAPHS[2] + "\n" + PARAGRAPHS[3] and len(merged.paragraphs) == 11
    assert [i.paragraph_numbers for i in merged.items] == [[2], [3], [4], [8], [11]]
    split = split_paragraph(merged, 3, 3)  # back before the line that was §4
    assert split.paragraphs == PARAGRAPHS
    assert [i.paragraph_numbers for i in split.items] == [[2], [3], [5], [9], [12]]


def test_pasting_again_drops_numbers_past_the_new_end() -> None:
    shorter, dropped = with_paragraphs(draft(), PARAGRAPHS[:9])
    assert dropped == [12] and [i.paragraph_numbers for i in shorter.items] == [[2], [3, 4], [5], [9], []]


def test_the_built_record_is_what_the_importer_accepts() -> None:
    record = build_record(draft())
    assert record.answer_text.splitlines()[:4] == [
        "$$[1] 第1　請求の根拠",
        "$$[2] 甲の請求は、売買契約に基づく代金支払請求である。",
        "$$[3] 乙は、同時履行の抗弁権を主張すると考えられる。",
        "目的物の引渡しがまだだからである。",
    ]
    assert parse_marked_answer_paragraphs(record.answer_text) == list(enumerate(PARAGRAPHS, start=1))
    assert record.review_json == {
        "overall_review": "論点には気付けているが、要件の当てはめが薄い。",
        "strengths": [
            {"title": "請求の特定", "description": "訴訟物を冒頭で示している。", "paragraph_numbers": [2]},
            {
                "title": "抗弁の発見",
                "description": "同時履行の抗弁に気付いている。",
                "paragraph_numbers": [3, 4],
            },
        ],
        "weaknesses": [
            {
                "title": "当てはめ不足",
                "description": "弁済期の事実を拾っていない。",
                "paragraph_numbers": [5],
            },
            {"title": "再反論の理由", "description": "理由づけがない。", "paragraph_numbers": [9]},
        ],
        "important_points": [
            {"title": "引換給付判決", "description": "結論の形を意識すること。", "paragraph_numbers": [12]}
        ],
        "future_considerations": [],
    }
    check = check_review_record(record.to_json_dict())
    assert check.errors == [] and check.warnings == [] and check.record == record
    # spec 02 for §3: Specified §1..§8, Related the two items citing 3
    specified = extract_specified_text_from_answer(record.answer_text, [3])
    assert specified.splitlines()[0] == "§1 第1　請求の根拠" and specified.splitlines()[-1].startswith("§8 ")
    assert [i["title"] for i in get_related_review_json_items(record.review_json, [3])] == ["抗弁の発見"]


def test_the_form_problems_are_listed_in_japanese() -> None:
    assert check_draft(draft()) == []
    bad = draft(question_text="  ", paragraphs=[], overall_review="")
    assert check_draft(bad) == [
        "問題文を入力してください。",
        "答案を貼り付けてください。",
        "全体講評を入力してください。",
        "良い点 1件目: §2 は答案にありません（答案は §1～§0）。",
        "良い点 2件目: §3、§4 は答案にありません（答案は §1～§0）。",
        "改善点 1件目: §5 は答案にありません（答案は §1～§0）。",
        "改善点 2件目: §9 は答案にありません（答案は §1～§0）。",
        "重要ポイント 1件目: §12 は答案にありません（答案は §1～§0）。",
    ]
    items = [ItemDraft("weaknesses", "", " ", [13]), ItemDraft("future_considerations", "次", "", [1])]
    assert check_draft(draft(items=items)) == [
        "改善点 1件目: 見出しか内容を入力してください。",
        "改善点 1件目: §13 は答案にありません（答案は §1～§12）。",
    ]


def test_an_untitled_form_is_named_after_the_question() -> None:
    assert (
        build_record(draft(title=" ")).title
        == "甲は乙に対し、売買代金の支払を求めた。乙の反論の当否を論ぜよ。"
    )


def test_an_imported_review_opens_as_a_form_and_saves_the_same() -> None:
    sample = load_sample_review()
    form = draft_from_record(sample)
    assert len(form.paragraphs) == 24 and form.extra == {"score": "B-"}
    assert form.items[2].paragraph_numbers == [15, 16]  # paragraph_numbers and paragraph_number together
    again = build_record(form)
    assert parse_marked_answer_paragraphs(again.answer_text) == parse_marked_answer_paragraphs(
        sample.answer_text
    )
    assert again.review_json["score"] == "B-" and check_draft(form) == []


def test_an_answer_numbered_with_gaps_is_renumbered_with_its_items() -> None:
    record = build_record(draft())
    record.answer_text = "$$[10] 一\n$$[20] 二"
    record.review_json = {
        "overall_review": "OV",
        "weaknesses": [{"title": "w", "paragraph_number": 20, "x": 1}],
    }
    form = draft_from_record(record)
    assert form.paragraphs == ["一", "二"]
    assert (form.items[0].paragraph_numbers, form.items[0].extra) == ([2], {"x": 1})


def raw(answer: str) -> bytes:
    data = {
        "title": "t",
        "question_text": "Q",
        "answer_text": answer,
        "review_json": {"overall_review": "OV"},
    }
    return json.dumps(data, ensure_ascii=False).encode()


def test_import_problems_are_readable() -> None:
    assert read_review_file(b"not json").errors == [
        "JSONとして読み取れませんでした（1行目 1文字目: Expecting value）。"
    ]
    assert read_review_file(raw("前書き\n$$[1] 一\n$$[1] 二\n＄＄［3］ 三\n$$[0] 零")).errors == [
        "answer_text: 最初の $$[N] より前に文章があります（1行目）。その文章はどの段落にも入らないため、"
        "先頭行を $$[1] で始めてください。",
        "answer_text: 3行目: 段落番号 $$[1] が2回使われています。",
        "answer_text: 4行目の「＄＄［3］ 三」は段落の目印として読めません（半角で $$[1] のように書いてください）。",
        "answer_text: 5行目: 段落番号は1から始めてください（$$[0] は使えません）。",
    ]
    assert read_review_file(raw(marked_answer(PARAGRAPHS))).errors == []
