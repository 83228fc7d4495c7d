"""core.workbench.report / debug_notes / the CSV export: tokens incl. cached, the cost column, notes and their
kinds, the notes filter, cost tables per flow; call_view carries where the call sits."""

import csv
import io

from core.debuglog.events import CSV_COLUMNS, CSV_HEADERS, DebugEvent, call_view, events_to_csv
from core.workbench.notes import call_notes, note_kind, note_kinds
from core.workbench.prices import costs_by_flow, event_cost, parse_prices
from core.workbench.report import (
    calls_frame,
    cost_chart_rows,
    cost_table,
    filter_calls,
    tokens_chart_rows,
)
from core.workbench.tree import build_tree

PRICES = parse_prices('[models.m]\ninput = 1\ncached_input = 0.5\noutput = 2\ncurrency = "USD"\n')
DOWNGRADE = "response_format json_schema not accepted by this server; downgraded to json_object+schema"
SHORT = "assistant_message が短すぎます（2 文字）: spec 01 §7.1"


def ev(kind, call_id, flow="knowledge", model="m", attempt=1, **kw):
    return DebugEvent(
        flow=flow,
        step="turn",
        kind=kind,
        call_id=call_id,
        provider="openai",
        model=model,
        attempt=attempt,
        **kw,
    )


EVENTS = [
    ev(
        "call",
        "a",
        usage={"input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 100},
        notes=[DOWNGRADE],
        conversation_id="iv-1",
        turn=3,
        session_id="s",
        temperature=0.1,
        request_id="req-9",
        ok=True,
    ),
    ev("result", "a", ok=True),
    ev("note", "a", notes=[SHORT]),
    ev("call", "b", flow="memory", model="other", usage={"input_tokens": 10, "output_tokens": 5}, ok=True),
    ev("error", "c", flow="memory", ok=False, error_type="provider_error", notes=["timeout: read timed out"]),
]


def test_note_kinds_follow_the_wording_of_the_notes():
    assert note_kind(DOWNGRADE) == "形式の格下げ"
    assert note_kind(SHORT) == "短い・空の返答"
    assert note_kind("履歴を 3 件省きました") == "履歴の省略"
    assert note_kind("応答 9,000 文字のうち 4,000 文字だけを表示・保存（issue #15）") == "切り詰め"
    assert note_kind("state.score: 12 は範囲外のため 10 に丸めました") == "数値の補正"
    assert note_kind("timeout: read timed out") == "プロバイダーエラー"
    assert note_kind("なにか") == "その他"
    node = build_tree(EVENTS)[0].turns[0].calls[0]
    notes = call_notes(node)
    assert [(n.kind, n.attempt) for n in notes] == [("形式の格下げ", 1), ("短い・空の返答", 0)]
    assert note_kinds(notes) == ["短い・空の返答", "形式の格下げ"]


def test_calls_frame_has_cached_tokens_cost_notes_and_filters():
    frame = calls_frame(EVENTS, PRICES)
    assert list(frame["call_id"]) == ["a", "b", "c"]
    first = frame.iloc[0]
    assert (first["入力トークン"], first["キャッシュ入力"], first["出力トークン"]) == (1000, 400, 100)
    # 600 * 1 + 400 * 0.5 + 100 * 2 = 1000 per 1M
    assert first["費用"] == "USD 0.001"
    assert first["メモ"] == f"{DOWNGRADE} / {SHORT}"
    assert first["メモの種類"] == ["形式の格下げ", "短い・空の返答"]
    assert (first["会話"], first["ターン"]) == ("iv-1", 3)
    assert list(frame["費用"])[1:] == ["価格未設定（other）", "USD 0"]
    assert list(frame["会話"])[1:] == ["（会話IDなし）", "（会話IDなし）"]
    assert list(filter_calls(frame, with_notes=True)["call_id"]) == ["a", "c"]
    assert list(filter_calls(frame, note_kinds=["プロバイダーエラー"])["call_id"]) == ["c"]
    assert list(filter_calls(frame, ["memory"], with_notes=True)["call_id"]) == ["c"]
    assert calls_frame(EVENTS)["費用"].tolist() == ["", "", ""]  # without prices: no cost column text


def test_cost_tables_per_flow():
    sums = costs_by_flow(build_tree(EVENTS), PRICES)
    table = cost_table(sums, "フロー")
    assert table.to_dict("records") == [
        {
            "フロー": "knowledge",
            "呼び出し": 1,
            "入力トークン": 1000,
            "キャッシュ入力": 400,
            "出力トークン": 100,
            "費用": "USD 0.001",
        },
        {
            "フロー": "memory",
            "呼び出し": 2,
            "入力トークン": 10,
            "キャッシュ入力": 0,
            "出力トークン": 5,
            "費用": "USD 0 ＋ 価格未設定（other）",
        },
    ]
    assert cost_chart_rows(sums, "フロー").to_dict("records") == [
        {"フロー": "knowledge", "通貨": "USD", "費用": 0.001},
        {"フロー": "memory", "通貨": "USD", "費用": 0.0},
    ]
    tokens = tokens_chart_rows(sums, "フロー")
    assert tokens[tokens["フロー"] == "knowledge"]["トークン"].tolist() == [600, 400, 100]


def test_csv_export_carries_the_new_fields_and_the_cost():
    text = events_to_csv(EVENTS, secrets=["req-9"], cost=lambda e: event_cost(e, PRICES).text())
    assert text.startswith("\ufeff".encode())  # Excel reads UTF-8 only with the BOM
    named = list(csv.DictReader(io.StringIO(text.decode("utf-8-sig"))))
    assert list(named[0]) == [CSV_HEADERS[c] for c in CSV_COLUMNS]
    rows = [{key: r[CSV_HEADERS[key]] for key in CSV_COLUMNS} for r in named]
    first = rows[0]
    assert (first["cached_input_tokens"], first["conversation_id"], first["turn"]) == ("400", "iv-1", "3")
    assert (first["temperature"], first["request_id"], first["session_id"]) == ("0.1", "[REDACTED]", "s")
    assert first["notes"] == DOWNGRADE and first["cost"] == "USD 0.001"
    assert [r["cost"] for r in rows] == ["USD 0.001", "", "", "価格未設定（other）", "USD 0"]
    assert rows[2]["notes"] == SHORT


def test_call_view_says_where_the_call_sits():
    view = call_view(EVENTS[0])
    assert (view["call_id"], view["conversation_id"], view["turn"]) == ("a", "iv-1", 3)
