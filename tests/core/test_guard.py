"""The guard: local repair, repair calls, error types, attempts and debug events (ARCHITECTURE.md "The guard")."""

from __future__ import annotations

import json

import pytest

from core.contracts.schemas import load_schema
from core.debuglog.events import (
    DebugEvent,
    ListSink,
    WireFacts,
    call_view,
    events_from_jsonl,
    events_to_csv,
    events_to_jsonl,
)
from core.guard.json_guard import (
    GuardedStream,
    build_repair_instruction,
    guarded_json,
    guarded_stream,
    guarded_text,
)
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, Usage
from core.llm.replay import ReplayClient

TURN = load_schema("knowledge_llm_turn")
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "こんにちは"}]
VALID = {
    "control": {"schema_version": "1.0", "mode": "interview"},
    "state": {"phase": "collect_case", "missing_info": ["契約書の種類"]},
    "assistant_message": "契約書の種類を教えてください。",
    "knowledge_json": None,
}
VALID_TEXT = json.dumps(VALID, ensure_ascii=False)


def run(outputs, **kwargs):
    client = ReplayClient(outputs)
    result = guarded_json(client, MESSAGES, TURN, name="Turn", **kwargs)
    return result, client


@pytest.mark.parametrize(
    ("raw", "fixes"),
    [
        (f"```json\n{VALID_TEXT}\n```", ["code_fence"]),
        (f"```\n{VALID_TEXT}\n```", ["code_fence"]),
        (f"以下がJSONです。\n{VALID_TEXT}\nよろしくお願いします。", ["extract_from_prose"]),
        ("\ufeff" + VALID_TEXT, ["strip_bom"]),
        (VALID_TEXT[:-1] + ",}", ["trailing_commas"]),
        (
            json.dumps(VALID, ensure_ascii=False, indent=2).replace('"interview"', '"interview", // mode\n'),
            ["strip_comments", "trailing_commas"],
        ),
        (f"Sure:\n```json\n{VALID_TEXT[:-1]},\n}}\n```", ["code_fence", "trailing_commas"]),
    ],
)
def test_local_repair_needs_no_extra_call(raw, fixes):
    result, client = run([raw])
    assert result.ok, result.errors
    assert result.data == VALID
    assert len(client.requests) == 1
    assert [a.fixes for a in result.attempts] == [fixes]


def test_valid_json_is_never_rewritten():
    result, _ = run([VALID_TEXT])
    assert result.ok and result.data == VALID and result.raw == VALID_TEXT
    assert result.attempts[0].fixes == []


def test_schema_error_is_repaired_by_a_repair_call_on_the_same_stack():
    bad = json.dumps({**VALID, "control": {"schema_version": "1.0", "mode": "chat"}}, ensure_ascii=False)
    result, client = run([bad, VALID_TEXT])
    assert result.ok and result.data == VALID
    assert [a.kind for a in result.attempts] == ["initial", "repair"]
    assert result.attempts[0].error_type == "schema_error"
    first, second = client.requests
    assert first.messages == MESSAGES
    error = "$.control.mode: 'chat' is not one of ['interview', 'clarify', 'finalize']"
    assert second.messages == [
        *MESSAGES,
        {"role": "assistant", "content": bad},
        {"role": "user", "content": build_repair_instruction(bad, error, "schema_error")},
    ]
    assert second.json_schema is not None and second.json_schema.name == "Turn"


def test_repair_instruction_is_spec_01_text():
    text = build_repair_instruction("{bad", "Expecting value", "parse_error")
    assert text.startswith("以下は、あなたが直前に出力した JSON 文字列です。\n\n---\n{bad\n---\n")
    assert "エラー種別: parse_error\nエラー内容: Expecting value\n" in text
    assert text.endswith(
        "- フィールド構造は control, state, assistant_message, knowledge_json の 4 つのみを使用してください。"
    )


def test_all_repairs_failing_gives_ok_false_with_three_attempts():
    result, client = run(["nope", "still nope", '{"control": 1}'])
    assert not result.ok
    assert result.error_type == "schema_error"
    assert result.raw == '{"control": 1}'
    assert len(result.attempts) == 3 and len(client.requests) == 3
    assert [a.error_type for a in result.attempts] == ["parse_error", "parse_error", "schema_error"]
    assert result.message.startswith("LLMの出力が決められた形")
    # spec 00: every repair call restarts from the original stack with the latest raw output only
    assert client.requests[2].messages == [
        *MESSAGES,
        {"role": "assistant", "content": "still nope"},
        {
            "role": "user",
            "content": build_repair_instruction("still nope", result.attempts[1].errors[0], "parse_error"),
        },
    ]


def test_max_repairs_is_configurable():
    result, client = run(["x"], max_repairs=0)
    assert not result.ok and result.error_type == "parse_error" and len(client.requests) == 1


def test_truncated_reply_is_its_own_error_and_not_closed_with_brackets():
    cut = VALID_TEXT[:40]
    result, client = run([LLMReply(cut, finish_reason="length"), VALID_TEXT])
    assert result.ok and len(client.requests) == 2
    assert result.attempts[0].error_type == "truncated"
    result, _ = run([cut, cut, cut])
    assert not result.ok and result.error_type == "truncated"


def test_refusal_is_not_pushed_with_repairs():
    result, client = run([LLMReply("お応えできません", finish_reason="refusal")])
    assert not result.ok and result.error_type == "refusal" and len(client.requests) == 1
    assert result.message == "LLMが回答を拒否しました。"


def test_empty_output_gets_a_repair_call():
    result, client = run(["   ", VALID_TEXT])
    assert result.ok and result.attempts[0].error_type == "empty_output" and len(client.requests) == 2


@pytest.mark.parametrize(
    "kind", ["timeout", "rate_limit", "server_error", "auth", "connection", "bad_request"]
)
def test_provider_errors_become_results(kind):
    result, _client = run([ProviderError(kind, "boom", 429)])
    assert not result.ok and result.error_type == "provider_error"
    assert result.errors == [ProviderError.MESSAGES[kind]]
    assert ProviderError.MESSAGES[kind] in result.message
    assert len(result.attempts) == 1 and result.attempts[0].finish_reason == "error"


def test_provider_error_during_a_repair_call_keeps_the_last_raw():
    result, _ = run(["nope", ProviderError("server_error", "503")])
    assert not result.ok and result.error_type == "provider_error" and len(result.attempts) == 2


def test_flow_validators_run_after_the_schema():
    def no_draft_without_title(data):
        return [] if data["assistant_message"] != "x" else ["$.assistant_message: too short"]

    bad = json.dumps({**VALID, "assistant_message": "x"})
    result, client = run([bad, VALID_TEXT], validators=[no_draft_without_title])
    assert result.ok and result.attempts[0].errors == ["$.assistant_message: too short"]
    assert "エラー内容: $.assistant_message: too short" in client.requests[1].messages[-1]["content"]


def test_events_record_every_call_repair_and_result():
    events: list = []
    bad = '```json\n{"control": {}}\n```'
    result, _ = run([bad, VALID_TEXT], sink=ListSink(events), tags={"flow": "knowledge", "step": "turn"})
    assert result.ok
    assert [e.kind for e in events] == ["call", "repair", "call", "result"]
    assert {e.call_id for e in events} == {events[0].call_id}
    assert events[0].fixes == ["code_fence"] and events[0].error_type == "schema_error"
    assert events[0].messages == MESSAGES and events[0].schema_name == "Turn"
    assert events[1].messages[-1]["content"].startswith("以下は、あなたが直前に出力した")
    assert events[2].ok and events[3].parsed == VALID
    assert all(e.flow == "knowledge" and e.step == "turn" and e.provider == "replay" for e in events)


def test_events_are_redacted():
    events: list = []
    secret = "sk-proj-ABCDEFGHIJKLMNOP1234"
    messages = [{"role": "user", "content": f"my key is {secret}, Authorization: Bearer abcdefghijklmnop"}]
    guarded_json(ReplayClient([VALID_TEXT]), messages, TURN, name="Turn", sink=ListSink(events))
    dumped = json.dumps([e.to_dict() for e in events], ensure_ascii=False)
    assert secret not in dumped and "abcdefghijklmnop" not in dumped and "[REDACTED]" in dumped


def test_guarded_text_ok_empty_and_provider_error():
    ok = guarded_text(ReplayClient(["こんにちは"]), MESSAGES)
    assert ok.ok and ok.text == "こんにちは"
    empty = guarded_text(ReplayClient([""]), MESSAGES)
    assert not empty.ok and empty.error_type == "empty_output" and empty.message == "LLMの出力が空でした。"
    failed = guarded_text(ReplayClient([ProviderError("rate_limit")]), MESSAGES)
    assert not failed.ok and failed.error_type == "provider_error" and "429" in failed.message


def test_guarded_text_stream_yields_deltas_then_a_result():
    events: list = []
    stream = guarded_stream(
        ReplayClient(["一二三四五六七八九十" * 5]),
        MESSAGES,
        sink=ListSink(events),
        tags={"flow": "review", "step": "chat"},
    )
    assert isinstance(stream, GuardedStream)
    chunks = list(stream)
    assert len(chunks) > 1 and "".join(chunks) == "一二三四五六七八九十" * 5
    assert stream.result is not None and stream.result.ok and stream.result.text == "".join(chunks)
    assert [e.kind for e in events] == ["call", "result"] and events[0].step == "chat"
    assert events[1].ok and events[1].call_id == events[0].call_id


class _BrokenStream:
    provider, model = "broken", "m"

    def complete(self, request: LLMRequest) -> LLMReply:
        raise AssertionError

    def stream(self, request: LLMRequest) -> TextStream:
        def gen():
            yield "途中まで"
            raise ProviderError("timeout", "read timeout")

        return TextStream(gen())


def test_stream_failure_mid_way_becomes_a_result():
    stream = guarded_stream(_BrokenStream(), MESSAGES)
    assert isinstance(stream, GuardedStream)
    assert list(stream) == ["途中まで"]
    assert stream.result is not None and not stream.result.ok
    assert stream.result.error_type == "provider_error" and stream.result.raw == "途中まで"


def test_wire_schema_is_sent_but_replies_are_checked_against_the_schema():
    wire = {"type": "object", "properties": {"x": {"type": "string"}}}
    client = ReplayClient(['{"x": "only the wire shape"}', VALID_TEXT])
    result = guarded_json(client, MESSAGES, TURN, name="Turn", wire_schema=wire)
    assert result.ok and len(client.requests) == 2
    assert all(r.json_schema is not None and r.json_schema.schema is wire for r in client.requests)


def test_attempts_and_events_carry_form_estimated_usage_and_ttft():
    reply = LLMReply(
        VALID_TEXT,
        usage=Usage(30, 12, estimated=True),
        wire=WireFacts(response_format="json_object+schema"),
        notes=["response_format json_schema not accepted by this server; downgraded to json_object+schema"],
    )
    events: list = []
    result, _ = run([reply], sink=ListSink(events))
    assert result.ok
    attempt = result.attempts[0]
    assert attempt.wire.response_format == "json_object+schema" and attempt.usage_estimated
    assert attempt.usage == {"input_tokens": 30, "output_tokens": 12, "cached_input_tokens": 0}
    assert attempt.ttft_ms is None
    call = events[0]
    assert call.kind == "call" and call.response_format == "json_object+schema" and call.usage_estimated
    assert call.notes == reply.notes
    view = call_view(call)
    assert view["response_format"] == "json_object+schema" and view["usage_estimated"]


def test_streamed_text_records_ttft_even_when_the_client_does_not():
    events: list = []
    stream = guarded_stream(_Untimed(), MESSAGES, sink=ListSink(events))
    assert "".join(stream) == "一二三"
    assert stream.result is not None and stream.result.ok
    attempt = stream.result.attempts[0]
    assert attempt.ttft_ms is not None and attempt.ttft_ms >= 0
    assert events[0].ttft_ms == attempt.ttft_ms and not events[0].usage_estimated
    # a client's own ttft wins over the guard's
    stream = guarded_stream(ReplayClient([LLMReply("abc", ttft_ms=123.0)]), MESSAGES)
    "".join(stream)
    assert stream.result is not None and stream.result.attempts[0].ttft_ms == 123.0


class _Untimed:
    provider, model = "untimed", "m"

    def complete(self, request: LLMRequest) -> LLMReply:
        raise AssertionError

    def stream(self, request: LLMRequest) -> TextStream:
        return TextStream(iter(["一", "二", "三"]))  # no reply at the end: the guard builds one


def test_debug_exports_without_the_new_fields_still_load():
    old = {
        "flow": "review",
        "step": "chat",
        "kind": "call",
        "ts": 1.0,
        "raw": "x",
        "usage": {"input_tokens": 1, "output_tokens": 2},
        "latency_ms": 5.0,
    }
    (event,) = events_from_jsonl(json.dumps(old) + "\n")
    assert event.response_format is None and event.usage_estimated is False and event.ttft_ms is None
    again = events_from_jsonl(
        events_to_jsonl([DebugEvent("f", "s", "call", ttft_ms=9.5, usage_estimated=True)])
    )
    assert again[0].ttft_ms == 9.5 and again[0].usage_estimated
    assert "最初のトークンまで（ms）" in events_to_csv(again).decode("utf-8-sig").splitlines()[0]
