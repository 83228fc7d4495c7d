"""spec 00 LLM呼び出しフロー / spec 01 §5-6: message stacks, repairs, normalization (knowledge flow)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.contracts.schemas import strict_copy, validation_errors
from core.debuglog.events import ListSink
from core.flows.chat_item import assistant_item, error_item, user_item
from core.flows.knowledge import interview as kf
from core.llm.base import ProviderError
from core.llm.replay import ReplayClient

TURN = kf.turn_schema()
ENTRY = kf.entry_schema()
SYSTEM = "SYSTEM PROMPT"
ENTRY_FULL = {
    "contract_type": "業務委託契約",
    "knowledge_title": "秘密保持期間",
    "target_clause": "第8条（秘密保持）",
    "review_points": "3年では短い",
    "action_plan": "5年を提案",
    "clause_sample": "本契約終了後5年間存続する。",
}


def turn(
    knowledge=None,
    *,
    phase="collect_case",
    mode="interview",
    message="契約の種類を教えてください。",
    missing=None,
):
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": mode},
            "state": {"phase": phase, "missing_info": missing if missing is not None else ["契約の種類"]},
            "assistant_message": message,
            "knowledge_json": knowledge,
        },
        ensure_ascii=False,
    )


def run(client, user_text="秘密保持期間が3年に限定されました", file_texts=None, history=None, **kw):
    return kf.call_llm(user_text, file_texts, SYSTEM, history, client, TURN, ENTRY, **kw)


HEAD = [{"role": "system", "content": SYSTEM}, {"role": "assistant", "content": kf.FEW_SHOT_TURN}]


def test_few_shot_turn_is_schema_valid_and_spec_text():
    assert json.loads(kf.FEW_SHOT_TURN) == {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": []},
        "assistant_message": "次の質問をしてください",
        "knowledge_json": None,
    }
    assert kf.parse_and_validate_turn(kf.FEW_SHOT_TURN, TURN, ENTRY)["ok"] is True


def test_first_turn_stack_and_structured_output():
    client = ReplayClient([turn()])
    out = run(client)
    request = client.requests[0]
    assert request.messages == [
        *HEAD,
        {"role": "user", "content": "ユーザー指示:\n秘密保持期間が3年に限定されました"},
    ]
    assert request.json_schema is not None
    assert request.json_schema.schema is kf.wire_turn_schema(TURN, ENTRY)
    assert request.json_schema.name == "ContractReviewKnowledgeTurn"
    assert request.tags == {"flow": "knowledge", "step": "interview_turn"}
    assert out["ok"] is True
    assert out["assistant_message"] == "契約の種類を教えてください。"
    assert out["knowledge"] == []
    assert out["state"] == {"phase": "collect_case", "missing_info": ["契約の種類"]}
    assert out["control"] == {"schema_version": "1.0", "mode": "interview"}
    assert out["raw"] == turn()
    assert out["messages"] == request.messages


def test_history_stack_keeps_order_and_skips_non_chat_items():
    history = [
        user_item("ユーザー指示:\n最初の相談", status="done", text="最初の相談"),
        assistant_item(turn(), assistant_message="契約の種類を教えてください。"),
        user_item("ユーザー指示:\n失敗した入力", status="error"),  # a failed rally stays out
        error_item("LLMの出力をJSONとして読み取れませんでした。", error_type="parse_error", raw="壊れた出力"),
        user_item("ユーザー指示:\n答えを待つ入力"),  # pending: not history either
        {"role": "user", "content": "ユーザー指示:\n業務委託契約です"},  # plain dicts without status enter
        {"role": "assistant", "content": "二つ目の応答"},
    ]
    client = ReplayClient([turn()])
    run(client, user_text="第8条です", history=history)
    assert client.requests[0].messages == [
        *HEAD,
        {"role": "user", "content": "ユーザー指示:\n最初の相談"},
        {"role": "assistant", "content": turn()},
        {"role": "user", "content": "ユーザー指示:\n業務委託契約です"},
        {"role": "assistant", "content": "二つ目の応答"},
        {"role": "user", "content": "ユーザー指示:\n第8条です"},
    ]


def test_attachments_only_stack():
    client = ReplayClient([turn()])
    run(client, user_text="", file_texts=["第1条（目的）\n本文", "第8条（秘密保持）"])
    assert client.requests[0].messages == [
        *HEAD,
        {"role": "user", "content": "添付テキスト:\n第1条（目的）\n本文\n\n第8条（秘密保持）"},
    ]


def test_text_and_attachments_stack():
    client = ReplayClient([turn()])
    run(client, user_text="この契約を見てください", file_texts=["A", "B"])
    assert client.requests[0].messages == [
        *HEAD,
        {"role": "user", "content": "ユーザー指示:\nこの契約を見てください\n\n添付テキスト:\nA\n\nB"},
    ]


def test_invalid_json_then_valid_is_ok_in_two_calls():
    bad = "承知しました。契約の種類は何ですか"
    client = ReplayClient([bad, turn()])
    out = run(client)
    assert out["ok"] is True and len(client.requests) == 2
    first = client.requests[0].messages
    error = kf.parse_and_validate_turn(bad, TURN, ENTRY)["error"]
    assert client.requests[1].messages == [
        *first,
        {"role": "assistant", "content": bad},
        {"role": "user", "content": kf.build_repair_instruction(bad, error, "parse_error")},
    ]
    assert [a["kind"] for a in out["attempts"]] == ["initial", "repair"]


def test_knowledge_missing_field_gets_repair_with_raw_and_error():
    partial = {k: v for k, v in ENTRY_FULL.items() if k != "clause_sample"}
    bad = turn(partial, phase="draft_knowledge", mode="finalize")
    client = ReplayClient([bad, turn(ENTRY_FULL, phase="draft_knowledge", mode="finalize")])
    out = run(client)
    assert out["ok"] is True
    repair = client.requests[1].messages[-1]["content"]
    assert bad in repair
    assert "エラー種別: schema_error" in repair
    assert "$.knowledge_json: 'clause_sample' is a required property" in repair
    assert client.requests[1].messages[-2] == {"role": "assistant", "content": bad}
    assert out["knowledge"] == [ENTRY_FULL]


def test_three_failures_return_ok_false_with_error_type():
    bad = turn({"title": "古い形式"})
    client = ReplayClient([bad, bad, bad])
    out = run(client)
    assert len(client.requests) == 3
    assert out["ok"] is False
    assert out["error_type"] == "schema_error"
    assert out["raw"] == bad
    assert "$.knowledge_json" in out["error"]
    # spec 00: each repair call is the original messages + [assistant raw, user repair]
    base = client.requests[0].messages
    error = kf.parse_and_validate_turn(bad, TURN, ENTRY)["error"]
    pair = [
        {"role": "assistant", "content": bad},
        {"role": "user", "content": kf.build_repair_instruction(bad, error, "schema_error")},
    ]
    assert client.requests[1].messages == [*base, *pair]
    assert client.requests[2].messages == [*base, *pair]


def test_provider_error_is_a_result():
    out = run(ReplayClient([ProviderError("rate_limit", "429", 429)]))
    assert out["ok"] is False and out["error_type"] == "provider_error"
    assert "429" in out["error"]


def test_normalization_null_and_empty_strings():
    assert kf.parse_and_validate_turn(turn(None), TURN, ENTRY)["knowledge"] == []
    empty = {**ENTRY_FULL, "clause_sample": "", "action_plan": ""}
    out = kf.parse_and_validate_turn(turn(empty), TURN, ENTRY)
    assert out["ok"] is True
    assert out["knowledge"] == [empty]
    assert list(out["knowledge"][0]) == list(kf.KNOWLEDGE_FIELDS)


def test_parse_error_types():
    assert kf.parse_and_validate_turn("{", TURN, ENTRY)["error_type"] == "parse_error"
    assert kf.parse_and_validate_turn("", TURN, ENTRY)["error_type"] == "parse_error"
    assert kf.parse_and_validate_turn(None, TURN, ENTRY)["error_type"] == "parse_error"
    wrong = json.loads(turn())
    wrong["state"]["phase"] = "done"
    out = kf.parse_and_validate_turn(json.dumps(wrong), TURN, ENTRY)
    assert out["error_type"] == "schema_error" and "$.state.phase" in out["error"]
    # the guard's local repair applies here too: a fenced reply is accepted
    assert kf.parse_and_validate_turn("```json\n" + turn() + "\n```", TURN, ENTRY)["ok"] is True


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(),
            lambda c: st.lists(c) | st.dictionaries(st.text(), c),
            max_leaves=20,
        ).map(lambda v: json.dumps(v, ensure_ascii=False)),
    )
)
def test_parse_and_validate_never_raises(raw):
    out = kf.parse_and_validate_turn(raw, TURN, ENTRY)
    assert out["ok"] in (True, False)
    if not out["ok"]:
        assert out["error_type"] in ("parse_error", "schema_error") and out["raw"] == raw


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({k: st.text(max_size=30) for k in kf.KNOWLEDGE_FIELDS}))
def test_valid_entries_round_trip(entry):
    out = kf.parse_and_validate_turn(turn(entry, phase="draft_knowledge"), TURN, ENTRY)
    assert out["ok"] is True and out["knowledge"] == [entry]
    assert json.loads(kf.turn_json_text(out))["knowledge_json"] == entry


def test_repair_instruction_is_spec_01_text():
    assert kf.build_repair_instruction("RAW", "ERR", "parse_error") == "\n".join(
        [
            "以下は、あなたが直前に出力した JSON 文字列です。",
            "",
            "---",
            "RAW",
            "---",
            "",
            "この JSON をパースおよびスキーマバリデーションしたところ、エラーが発生しました。",
            "",
            "エラー種別: parse_error",
            "エラー内容: ERR",
            "",
            "元の意味内容はできるだけ維持したまま、指定されているスキーマに完全に準拠する JSON オブジェクトのみを出力してください。",
            "",
            "制約:",
            "- JSON 以外の文字を一切出力しないでください。",
            "- フィールド構造は control, state, assistant_message, knowledge_json の 4 つのみを使用してください。",
        ]
    )


def test_short_assistant_message_is_logged_as_warning():
    sink = ListSink()
    out = run(ReplayClient([turn(message="はい")]), sink=sink)
    assert out["ok"] is True
    notes = [e for e in sink.events if e.kind == "note"]
    assert len(notes) == 1 and "短すぎます" in notes[0].notes[0]


def test_max_repairs_is_configurable():
    client = ReplayClient(["x", "y"])
    out = run(client, max_repairs=1)
    assert out["ok"] is False and len(client.requests) == 2


@pytest.mark.parametrize(
    "user_text,files,expected",
    [
        ("", None, ""),
        ("a", [""], "ユーザー指示:\na"),
        ("", ["", "t"], "添付テキスト:\nt"),
    ],
)
def test_payload_parts_only_when_present(user_text, files, expected):
    assert kf.build_user_payload(user_text, files) == expected


def test_wire_schema_inlines_the_entry_so_openai_strict_mode_applies():
    wire = kf.wire_turn_schema(TURN, ENTRY)
    assert kf.wire_turn_schema(TURN, ENTRY) is wire  # built once
    assert strict_copy(TURN) is None  # the spec's free-form knowledge_json cannot be strict
    strict = strict_copy(wire)
    assert strict is not None and strict["properties"]["knowledge_json"]["anyOf"][1] == {"type": "null"}
    draft = {**json.loads(kf.FEW_SHOT_TURN), "knowledge_json": dict.fromkeys(kf.KNOWLEDGE_FIELDS, "x")}
    assert validation_errors(wire, draft) == [] and validation_errors(TURN, draft) == []
    assert validation_errors(wire, {**draft, "knowledge_json": {"title": "old field names"}}) != []
