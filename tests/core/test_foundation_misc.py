"""Schemas, prompts, debug log, store."""

import json

import pytest

from core.contracts.prompts import UnknownPromptError, fill, load_prompt
from core.contracts.schemas import UnknownSchemaError, load_schema, schema_names, validator_for
from core.debuglog.events import (
    DebugEvent,
    ListSink,
    events_from_jsonl,
    events_to_csv,
    events_to_jsonl,
    redact,
)
from core.store.db import open_store
from core.store.migrate import current_revision, head_revision
from core.workbench.report import attempts_per_flow, calls_frame, filter_calls


def test_every_schema_is_checked_and_cached():
    for name in schema_names():
        schema = load_schema(name)
        assert load_schema(name) is schema
        assert validator_for(schema) is validator_for(schema)
    with pytest.raises(UnknownSchemaError):
        load_schema("../pyproject")


def test_entry_schema_has_the_six_required_strings():
    entry = load_schema("knowledge_llm_entry")
    six = [
        "contract_type",
        "knowledge_title",
        "target_clause",
        "review_points",
        "action_plan",
        "clause_sample",
    ]
    assert entry["required"] == six and entry["additionalProperties"] is False
    assert all(entry["properties"][k]["type"] == "string" for k in six)


@pytest.mark.parametrize("name", ["../README", "/etc/passwd", "a/b", "..", "nope", "x.py"])
def test_prompt_names_are_refused_outside_prompts(name):
    with pytest.raises(UnknownPromptError):
        load_prompt(name)


def test_fill_replaces_only_given_placeholders():
    assert fill('{"a": 1} {QUESTION}', QUESTION="なぜ？") == '{"a": 1} なぜ？'


def test_redaction_of_keys_headers_and_known_values():
    value = {
        "headers": {"Authorization": "Bearer abc.def.ghi", "x-api-key": "sk-ant-api03-XYZ"},
        "api_key": "whatever-value",
        "text": "key=sk-proj-1234567890abcdef and OPENAI_API_KEY=supersecretvalue",
        "custom": "token shown: my-own-secret",
    }
    out = json.dumps(redact(value, ["my-own-secret"]))
    for secret in (
        "abc.def.ghi",
        "sk-ant-api03-XYZ",
        "whatever-value",
        "1234567890abcdef",
        "supersecretvalue",
        "my-own-secret",
    ):
        assert secret not in out
    assert redact({"usage": {"input_tokens": 3}}) == {"usage": {"input_tokens": 3}}


def test_list_sink_is_bounded_and_exports_round_trip():
    events: list = []
    sink = ListSink(events, limit=5, secrets=["sk-live-secret-1"])
    for i in range(8):
        sink.emit(DebugEvent(flow="f", step=str(i), kind="call", raw=f"sk-live-secret-1 #{i}", ok=True))
    assert [e.step for e in events] == ["3", "4", "5", "6", "7"]
    assert all("sk-live-secret-1" not in (e.raw or "") for e in events)
    again = events_from_jsonl(events_to_jsonl(events))
    assert [e.step for e in again] == ["3", "4", "5", "6", "7"]
    assert (
        events_to_csv(events)
        .decode("utf-8")
        .splitlines()[0]
        .startswith("\ufeff日時（日本時間）,フロー,ステップ,種類")
    )


def test_debug_report_tables():
    events = [
        DebugEvent(
            "knowledge",
            "turn",
            "call",
            call_id="a",
            attempt=1,
            ok=False,
            error_type="schema_error",
            latency_ms=10,
            provider="demo",
        ),
        DebugEvent("knowledge", "turn", "repair", call_id="a", attempt=1),
        DebugEvent(
            "knowledge", "turn", "call", call_id="a", attempt=2, ok=True, latency_ms=30, provider="demo"
        ),
        DebugEvent("knowledge", "turn", "result", call_id="a", attempt=2, ok=True),
        DebugEvent("review", "chat", "call", call_id="b", attempt=1, ok=True, latency_ms=5, provider="demo"),
        DebugEvent("review", "chat", "result", call_id="b", attempt=1, ok=True),
    ]
    frame = calls_frame(events)
    assert list(frame["結果"]) == ["schema_error", "ok", "ok"] and list(frame["index"]) == [0, 2, 4]
    assert len(filter_calls(frame, flows=["review"])) == 1
    assert len(filter_calls(frame, results=["schema_error"])) == 1
    per_flow = attempts_per_flow(events).set_index("フロー")
    assert per_flow.loc["knowledge", "平均試行回数"] == 2 and per_flow.loc["review", "平均試行回数"] == 1


def test_store_uses_wal_foreign_keys_and_records_the_version(tmp_path):
    engine = open_store(tmp_path)
    open_store(tmp_path)  # idempotent
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    assert current_revision(engine) == head_revision()  # the schema version is Alembic's revision
    assert (tmp_path / "app.db").exists()


def test_list_sink_bounds_the_text_it_keeps():
    events: list = []
    sink = ListSink(events, max_chars=25_000)
    for i in range(5):
        sink.emit(
            DebugEvent(
                flow="f", step=str(i), kind="call", messages=[{"role": "user", "content": "あ" * 10_000}]
            )
        )
    assert [e.step for e in events] == ["3", "4"]  # 20,000 chars kept; older ones dropped first
    sink.emit(DebugEvent(flow="f", step="huge", kind="call", raw="x" * 100_000))
    assert [e.step for e in events] == ["huge"]  # the newest event is always kept
