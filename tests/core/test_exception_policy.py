"""The exception policy: the clients turn SDK and server failures into ProviderError at their boundary; the
guard treats only those as results, so a bug of ours raises; a handler that keeps going logs the traceback
and leaves a note in the debug log."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from core.debuglog import trace
from core.debuglog.events import ListSink
from core.debuglog.kept_going import kept_going
from core.flows.knowledge.index import NOTICE_NO_REFERENCES, find_references
from core.guard.json_guard import guarded_json
from core.guard.text_guard import guarded_stream, guarded_text
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream
from core.llm.replay import ReplayClient, ReplayExhausted

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


class BuggyClient:
    """A client whose own code has a bug (not a provider failure)."""

    provider, model, sdk, base_host = "buggy", "m", None, None

    def complete(self, request: LLMRequest) -> LLMReply:
        return {}["missing"]  # type: ignore[no-any-return]  # KeyError: our bug

    def stream(self, request: LLMRequest) -> TextStream:
        raise TypeError("our bug while streaming")


class FailingClient(BuggyClient):
    provider = "failing"

    def complete(self, request: LLMRequest) -> LLMReply:
        raise ProviderError("rate_limit", "429", status=429)


MESSAGES = [{"role": "user", "content": "こんにちは"}]


def test_a_bug_in_a_client_raises_through_the_guard_instead_of_becoming_a_malformed_reply() -> None:
    with pytest.raises(KeyError):
        guarded_json(BuggyClient(), MESSAGES, SCHEMA, name="t")
    with pytest.raises(KeyError):
        guarded_text(BuggyClient(), MESSAGES)
    stream = guarded_stream(BuggyClient(), MESSAGES)
    with pytest.raises(TypeError):
        list(stream)


def test_a_provider_failure_is_still_a_result() -> None:
    rate_limited = "LLMの呼び出しに失敗しました。 " + ProviderError.MESSAGES["rate_limit"]
    result = guarded_json(FailingClient(), MESSAGES, SCHEMA, name="t")
    assert (result.ok, result.error_type, result.message) == (False, "provider_error", rate_limited)
    text = guarded_text(FailingClient(), MESSAGES)
    assert (text.ok, text.error_type, text.message) == (False, "provider_error", rate_limited)


def test_a_replay_with_too_few_outputs_fails_the_test_and_is_not_an_assertion() -> None:
    assert not issubclass(ReplayExhausted, AssertionError)
    with pytest.raises(ReplayExhausted):
        guarded_text(ReplayClient([]), MESSAGES)


def test_kept_going_logs_the_traceback_and_leaves_a_note(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("katachi.test")
    sink = ListSink()
    with trace.bind(flow="knowledge", conversation_id="iv-1", turn=3), caplog.at_level(logging.WARNING):
        try:
            raise OSError("disk full")
        except OSError:
            kept_going(log, "index write failed", sink, step="index")
    record = caplog.records[-1]
    assert record.getMessage() == "index write failed; carrying on"
    assert record.exc_info is not None and record.exc_info[0] is OSError
    (event,) = sink.events
    assert (event.kind, event.step, event.ok, event.error_type) == ("note", "index", False, "OSError")
    assert (event.flow, event.conversation_id, event.turn) == ("knowledge", "iv-1", 3)
    assert event.notes == ["index write failed; carrying on (OSError)"]


class BrokenIndex:
    def similar(self, text: str, *, interview_id: Any = None) -> list[Any]:
        raise RuntimeError("chroma is down")


def test_a_failed_knowledge_lookup_goes_on_with_a_notice_and_a_logged_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notices: list[str] = []
    with caplog.at_level(logging.WARNING, logger="core.flows.knowledge.index"):
        found = find_references([], "iv-1", BrokenIndex(), notices)  # type: ignore[arg-type]
    assert found == [] and notices == [NOTICE_NO_REFERENCES]
    (record,) = [r for r in caplog.records if r.name == "core.flows.knowledge.index"]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
