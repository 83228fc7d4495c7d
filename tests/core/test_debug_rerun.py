"""Re-run a recorded call on two models of the wire server: the exact request again, the playground edits."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from core.contracts.schemas import load_schema
from core.debuglog.events import CaptureSink, DebugEvent
from core.flows.knowledge import interview as kf
from core.guard.json_guard import guarded_json, guarded_text
from core.llm.openai_client import OpenAIClient
from core.llm.replay import ReplayClient
from core.llm.server_profiles import forget_forms
from core.settings import Settings
from core.workbench.rerun import (
    RerunRequest,
    Target,
    edit,
    parse_typed_models,
    rerun,
    rerun_request,
    target_settings,
    targets,
    validation_schema,
)
from tests.core.wire_server import Scripted, WireServer

KEY = "sk-test-RERUN-0000"
STACK = [
    {"role": "system", "content": "あなたは整備士です。緊急度を判定してください。"},
    {"role": "user", "content": "ブレーキを踏むとキーキー鳴ります"},
]
VALID = json.dumps(
    {
        "level": "medium",
        "can_drive": True,
        "visit_urgency": "this_week",
        "reasons": ["ブレーキパッドの摩耗の可能性"],
        "recommendation": "今週中に点検してください。",
    },
    ensure_ascii=False,
)
TAGS = {"flow": "diagnosis", "step": "urgency_check"}


@pytest.fixture(autouse=True)
def _fresh_forms() -> Iterator[None]:
    forget_forms()
    yield
    forget_forms()


def openai(server: WireServer, model: str) -> OpenAIClient:
    return OpenAIClient(model, api_key=KEY, base_url=server.openai_base_url)


def record_call(server: WireServer) -> tuple[list[DebugEvent], dict[str, Any]]:
    """A real guarded call on wire-a that needs one repair; events carry the wire settings (as the guard
    records them on main after helper A's change). Returns the events and the first request body."""
    server.enqueue(Scripted.text_reply("ごめんなさい、JSONではありません"), Scripted.text_reply(VALID))
    sink = CaptureSink()
    schema = load_schema("urgency")
    result = guarded_json(
        openai(server, "wire-a"),
        STACK,
        schema,
        name="urgency",
        sink=sink,
        tags=TAGS,
        max_tokens=300,
        temperature=0.2,
    )
    assert result.ok and len(result.attempts) == 2
    for event in sink.events:
        event.temperature, event.max_tokens, event.wire_schema = 0.2, 300, schema
    first_body = server.requests[0].body
    server.reset()
    return sink.events, first_body


def without_model(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "model"}


def test_the_request_is_the_first_attempts_original_stack_not_the_repair_stack(wire_server) -> None:
    events, _ = record_call(wire_server)
    repair_attempt = next(e for e in events if e.kind == "call" and e.attempt == 2)
    assert len(repair_attempt.messages) == 4  # original + assistant raw + repair prompt
    expected = RerunRequest(
        messages=STACK,
        schema_name="urgency",
        wire_schema=load_schema("urgency"),
        temperature=0.2,
        max_tokens=300,
        tags=TAGS,
        call_id=repair_attempt.call_id,
    )
    assert rerun_request(repair_attempt, events) == expected
    assert rerun_request(repair_attempt) == expected  # alone: the repair tail is cut


def test_rerun_on_two_models_sends_the_recorded_request_and_reports_both(wire_server) -> None:
    events, original = record_call(wire_server)
    wire_server.default = Scripted(
        make_text=lambda body: VALID if body["model"] == "wire-a" else "壊れた出力", input_tokens=40
    )
    request = rerun_request(events[0], events)
    outcomes = rerun(request, [openai(wire_server, "wire-a"), openai(wire_server, "wire-b")])

    bodies = {m: [r.body for r in wire_server.requests if r.body["model"] == m] for m in ("wire-a", "wire-b")}
    assert len(bodies["wire-a"]) == 1 and len(bodies["wire-b"]) == 3  # b: initial + 2 repairs
    assert without_model(bodies["wire-a"][0]) == without_model(original)
    assert without_model(bodies["wire-b"][0]) == without_model(original)
    assert original["messages"] == STACK and original["temperature"] == 0.2
    assert original["max_tokens"] == 300  # a base URL: the compatible-server token field
    assert bodies["wire-b"][1]["messages"][:2] == STACK  # repairs start from the original stack

    a, b = outcomes
    assert (a.model, a.valid, a.repairs, a.raw, a.error_type, a.error) == ("wire-a", True, 0, VALID, None, "")
    assert (a.input_tokens, a.output_tokens, a.cost.text()) == (40, 7, "価格未設定（wire-a）")
    assert (b.model, b.valid, b.repairs, b.raw, b.error_type) == (
        "wire-b",
        False,
        2,
        "壊れた出力",
        "parse_error",
    )
    assert b.error == "LLMの出力をJSONとして読み取れませんでした。"
    assert (b.input_tokens, b.output_tokens) == (120, 21)
    assert a.latency_ms > 0 and b.latency_ms > 0
    assert [e.kind for e in a.events] == ["call", "result"]


def test_edited_system_and_last_user_are_sent_and_the_recording_is_unchanged(wire_server) -> None:
    events, _ = record_call(wire_server)
    kept = copy.deepcopy(events)
    wire_server.default = Scripted.text_reply(VALID)
    request = rerun_request(events[0], events)
    edited = edit(request, system="あなたは厳しい整備士です。", last_user="ハンドルが重い")
    outcomes = rerun(edited, [openai(wire_server, "wire-a"), openai(wire_server, "wire-b")])
    assert [o.valid for o in outcomes] == [True, True]
    sent = sorted((r.body["model"], r.body["messages"]) for r in wire_server.requests)
    edited_stack = [
        {"role": "system", "content": "あなたは厳しい整備士です。"},
        {"role": "user", "content": "ハンドルが重い"},
    ]
    assert sent == [("wire-a", edited_stack), ("wire-b", edited_stack)]
    assert request.messages == STACK and events == kept  # the recorded call is untouched


def test_edit_keeps_earlier_user_turns_and_adds_a_missing_system() -> None:
    request = RerunRequest(
        [
            {"role": "user", "content": "一つ目"},
            {"role": "assistant", "content": "はい"},
            {"role": "user", "content": "二つ目"},
        ]
    )
    edited = edit(request, system="新しい指示", last_user="差し替え")
    assert edited.messages == [
        {"role": "system", "content": "新しい指示"},
        {"role": "user", "content": "一つ目"},
        {"role": "assistant", "content": "はい"},
        {"role": "user", "content": "差し替え"},
    ]
    assert (edited.system, edited.last_user) == ("新しい指示", "差し替え")
    assert edit(request) == request


def test_a_text_call_reruns_through_guarded_text() -> None:
    sink = CaptureSink()
    guarded_text(ReplayClient(["元の返答"]), STACK, sink=sink, tags={"flow": "review_chat", "step": "reply"})
    request = rerun_request(sink.events[0], sink.events)
    assert request.schema_name is None and request.tags == {"flow": "review_chat", "step": "reply"}
    first, second = ReplayClient(["返答A"], model="m1"), ReplayClient([""], model="m2")
    outcomes = rerun(request, [first, second])
    assert [(o.model, o.valid, o.raw, o.error_type) for o in outcomes] == [
        ("m1", True, "返答A", None),
        ("m2", False, "", "empty_output"),
    ]
    assert first.requests[0].messages == STACK and first.requests[0].json_schema is None


def test_targets_list_the_current_client_configured_providers_and_typed_models() -> None:
    settings = Settings("openai", "gpt-a", "http://127.0.0.1:9/v1", openai_api_key="sk-x")
    assert targets(settings, "gpt-b, anthropic:claude-x\nopenai:gpt-c, gpt-b, llama3:8b") == [
        Target("openai", "gpt-a", current=True),
        Target("demo", "katachi-demo"),
        Target("openai", "gpt-b"),
        Target("openai", "gpt-c"),
        Target("openai", "llama3:8b"),  # anthropic has no key: dropped
    ]
    assert parse_typed_models("demo:katachi-demo", Settings()) == [Target("demo", "katachi-demo")]
    made = target_settings(settings, Target("openai", "gpt-b"))
    assert (made.provider, made.model, made.base_url, made.openai_api_key) == (
        "openai",
        "gpt-b",
        "http://127.0.0.1:9/v1",
        "sk-x",
    )
    assert (
        Target("openai", "gpt-a", current=True).label == "現在のクライアント（OpenAI・互換サーバー / gpt-a）"
    )


def test_an_event_without_its_wire_schema_gets_the_flows_schema_of_that_name() -> None:
    event = DebugEvent("knowledge", "interview_turn", "call", call_id="c1", attempt=1, messages=STACK)
    event.schema_name = kf.TURN_JSON_NAME
    request = rerun_request(event)
    assert request.wire_schema == kf.wire_turn_schema(kf.turn_schema(), kf.entry_schema())
    assert validation_schema(request) is kf.turn_schema()
    event.schema_name = "urgency"
    assert rerun_request(event).wire_schema is load_schema("urgency")
    event.schema_name = "unknown_name"
    assert rerun_request(event).wire_schema is None
