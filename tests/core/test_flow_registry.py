"""core.flows.registry: one table of flows; the demo model plays each flow only when given its persona."""

from __future__ import annotations

import json

import pytest

from core.contracts.schemas import validation_errors
from core.flows.knowledge import interview as kf
from core.flows.registry import FLOWS, demo_client, demo_personas
from core.llm.base import JSONSchemaSpec, LLMRequest
from core.llm.demo import DemoClient


def test_every_flow_is_registered_once_under_its_flow_tag() -> None:
    assert list(FLOWS) == ["knowledge", "review", "memory", "diagnosis"]
    assert all(name == info.name and callable(info.demo_persona) for name, info in FLOWS.items())


def test_demo_personas_of_all_or_some_flows() -> None:
    assert demo_personas() == {name: info.demo_persona for name, info in FLOWS.items()}
    assert list(demo_personas(["memory"])) == ["memory"]
    with pytest.raises(KeyError):
        demo_personas(["unknown"])


def test_demo_client_plays_the_knowledge_interviewer_and_a_bare_one_does_not() -> None:
    wire = kf.wire_turn_schema(kf.turn_schema(), kf.entry_schema())
    request = LLMRequest(
        [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "業務委託契約の相談です"}],
        JSONSchemaSpec("Turn", wire),
        tags={"flow": kf.FLOW, "step": "turn"},
    )
    played = json.loads(demo_client().complete(request).text)
    generic = json.loads(DemoClient().complete(request).text)
    assert validation_errors(wire, played) == [] and validation_errors(wire, generic) == []
    assert played != generic and played["assistant_message"] != generic["assistant_message"]


def test_every_per_flow_fact_lives_in_flow_info() -> None:
    from core.guard.reply_limits import FLOW_LIMITS, ReplyLimits, limits_for  # noqa: PLC0415
    from core.workbench import replay_flows  # noqa: PLC0415

    assert {name: info.reply_limits for name, info in FLOWS.items()} == FLOW_LIMITS
    assert limits_for({"flow": "memory"}) == ReplyLimits(1500, 8_000)
    assert limits_for({"flow": "knowledge"}) == ReplyLimits(4096, 30_000)
    assert tuple(FLOWS) == replay_flows.REPLAYABLE
    assert replay_flows.KEY_LABELS == {"knowledge": "フェーズ", "memory": "感情", "diagnosis": "行動"}
    assert replay_flows.SECOND_KEY_LABELS == {"diagnosis": "緊急度"}
    assert replay_flows.CALL_FREE_TURNS == replay_flows.REQUEST_TURNS == frozenset({"diagnosis"})
    assert replay_flows.PRIMARY_STEPS["review"] == frozenset({"reply", "continue"})


def test_a_fifth_flow_is_one_registration_line_for_the_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """A throwaway flow registered in FLOWS is replayed by the workbench with no other change."""
    from dataclasses import replace  # noqa: PLC0415

    from core.debuglog.events import DebugEvent, ListSink  # noqa: PLC0415
    from core.workbench.replay_flows import open_runner, turn_keys  # noqa: PLC0415

    seen: list[tuple[str, object]] = []

    def factory(engine, client, extras):  # type: ignore[no-untyped-def]
        def run(text, turn_input, sink):  # type: ignore[no-untyped-def]
            seen.append((text, extras["rag"]))

        return run

    echo = replace(
        FLOWS["review"],
        name="echo",
        replay=factory,
        turn_keys=lambda calls: (str(len(calls)), ""),
        key_label="回数",
    )
    monkeypatch.setitem(FLOWS, "echo", echo)
    with open_runner("echo", demo_client(), rag=None) as run:
        run("こんにちは", None, ListSink())
    assert seen == [("こんにちは", None)]
    call = DebugEvent(flow="echo", step="x", kind="call")
    assert turn_keys("echo", [(call, None), (call, None)]) == ("2", "")
