"""core.workbench.ratings + exports: ratings travel with the calls of their turn (issue #9 item 6)."""

from __future__ import annotations

import csv
import io

from core.debuglog.events import DebugEvent, events_from_jsonl, events_to_csv, events_to_jsonl
from core.workbench.ratings import is_negative, rating_of, ratings_from_jsonl, ratings_from_rows
from core.workbench.report import calls_frame, filter_calls

ROWS = [
    {
        "flow": "review",
        "conversation_id": "7",
        "turn": 2,
        "score": 0,
        "rating": "👎",
        "comment": "引用が違う",
    },
    {"flow": "review", "conversation_id": "7", "turn": 1, "score": 1, "rating": "👍", "comment": ""},
]


def call(turn: int, step: str = "reply", conversation: str = "7") -> DebugEvent:
    return DebugEvent(
        flow="review",
        step=step,
        kind="call",
        call_id=f"{step}{turn}",
        conversation_id=conversation,
        turn=turn,
        ok=True,
    )


EVENTS = [call(1), call(2), call(2, "summary"), call(2, conversation="8"), call(0)]


def test_ratings_match_the_calls_of_their_turn_only() -> None:
    ratings = ratings_from_rows(ROWS)
    assert [is_negative(e, ratings) for e in EVENTS] == [False, True, True, False, False]
    assert rating_of(EVENTS[0], ratings) == {"score": 1, "rating": "👍", "comment": ""}
    frame = calls_frame(EVENTS, {}, ratings)
    assert list(frame["評価"]) == ["高評価", "低評価「引用が違う」", "低評価「引用が違う」", "", ""]
    negative = filter_calls(frame, negative_only=True)
    assert list(negative["index"]) == [1, 2]


def test_exports_carry_the_rating_and_an_import_reads_it_back() -> None:
    ratings = ratings_from_rows(ROWS)
    text = events_to_jsonl(EVENTS, rating=lambda e: rating_of(e, ratings))
    assert ratings_from_jsonl(text) == ratings
    assert [e.call_id for e in events_from_jsonl(text)] == [e.call_id for e in EVENTS]
    text = events_to_csv(EVENTS, rating=lambda e: rating_of(e, ratings)).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["評価"], r["評価コメント"]) for r in rows] == [
        ("👍", ""),
        ("👎", "引用が違う"),
        ("👎", "引用が違う"),
        ("", ""),
        ("", ""),
    ]


def test_a_secret_typed_into_a_comment_is_redacted_in_exports() -> None:
    ratings = ratings_from_rows([{**ROWS[0], "comment": "key sk-abcdefghijklmnop"}])
    text = events_to_jsonl(EVENTS[1:2], rating=lambda e: rating_of(e, ratings))
    assert "sk-abcdefghijklmnop" not in text and "[REDACTED]" in text
    csv_bytes = events_to_csv(EVENTS[1:2], rating=lambda e: rating_of(e, ratings))
    assert "sk-abcdefghijklmnop" not in csv_bytes.decode("utf-8-sig")
