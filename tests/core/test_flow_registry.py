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
