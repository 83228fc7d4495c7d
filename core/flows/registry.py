"""The flows of the app in one table: flow name -> FlowInfo, every per-flow fact the shell, the guard and the
workbench need. Adding a flow is its package, its page and one line in FLOWS.

Each flow's modules declare their parts (demo persona, reply limits, replay runner and key fields); this
table collects them, so core.llm, core.guard and core.workbench never name a flow. The shell
(pages/ui/shell/nav.py) names each page's flow from here; tests and scripts that want the demo model to play
the flows take the personas from `demo_personas()`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from core.flows.diagnosis.constants import FLOW_TAG as DIAGNOSIS
from core.flows.diagnosis.constants import REPLAY_STEPS as DIAGNOSIS_STEPS
from core.flows.diagnosis.constants import REPLY_LIMITS as DIAGNOSIS_LIMITS
from core.flows.knowledge.constants import FLOW as KNOWLEDGE
from core.flows.knowledge.constants import REPLY_LIMITS as KNOWLEDGE_LIMITS
from core.flows.knowledge.constants import STEP_TURN
from core.flows.memory.constants import FLOW as MEMORY
from core.flows.memory.constants import REPLY_LIMITS as MEMORY_LIMITS
from core.flows.replaying import ReplayFactory, TurnKeys, deferred_factory, deferred_keys, no_keys
from core.flows.review_chat.constants import FLOW as REVIEW
from core.flows.review_chat.constants import REPLY_LIMITS as REVIEW_LIMITS
from core.flows.review_chat.constants import STEP_CONTINUE, STEP_REPLY
from core.guard.reply_limits import ReplyLimits
from core.llm.base import LLMRequest
from core.llm.demo import DemoClient, Persona


def deferred_persona(module: str, name: str) -> Persona:
    """`module.name` as a demo persona imported on its first request: a persona plays the whole flow (and
    imports it), and the shell builds the demo client before any page has run."""

    def persona(request: LLMRequest) -> str:
        reply: str = getattr(importlib.import_module(module), name)(request)
        return reply

    return persona


@dataclass(frozen=True)
class FlowInfo:
    """One flow as the shell, the guard and the workbench see it.

    name: the flow tag, used as the chat key (`st.session_state.chat[name]`), as `tags["flow"]` of the
    flow's LLM calls (debug log grouping, reply limits) and as the key of its demo persona.
    demo_persona: what the offline demo model plays for requests tagged with this flow.
    reply_limits: output tokens asked for and characters kept per reply (core.guard.reply_limits).
    replay: builds a runner that sends recorded turns through the flow's real turn code (core.flows.replaying).
    primary_steps: the steps of a turn's calls the replay compares (background work is left out).
    turn_keys / key_label / second_key_label: the turn's key fields the replay compares, and their labels.
    call_free_turns: a turn may need no model call (a diagnosis button that only moves the interview on).
    request_turns: recorded requests are replayed one by one in log order (several may share a turn number).
    """

    name: str
    demo_persona: Persona
    reply_limits: ReplyLimits
    replay: ReplayFactory
    primary_steps: frozenset[str]
    turn_keys: TurnKeys = no_keys
    key_label: str | None = None
    second_key_label: str | None = None
    call_free_turns: bool = False
    request_turns: bool = False


FLOWS: dict[str, FlowInfo] = {
    info.name: info
    for info in (
        FlowInfo(  # spec 00 + 01
            KNOWLEDGE,
            deferred_persona("core.flows.knowledge.demo", "knowledge_persona"),
            KNOWLEDGE_LIMITS,
            deferred_factory("core.flows.knowledge.replaying", "knowledge_runner"),
            frozenset({STEP_TURN}),
            deferred_keys("core.flows.knowledge.replaying", "turn_keys"),
            key_label="フェーズ",
        ),
        FlowInfo(  # spec 02
            REVIEW,
            deferred_persona("core.flows.review_chat.demo", "review_persona"),
            REVIEW_LIMITS,
            deferred_factory("core.flows.review_chat.replaying", "review_runner"),
            frozenset({STEP_REPLY, STEP_CONTINUE}),
        ),
        FlowInfo(  # spec 03
            MEMORY,
            deferred_persona("core.flows.memory.demo", "memory_persona"),
            MEMORY_LIMITS,
            deferred_factory("core.flows.memory.replaying", "memory_runner"),
            frozenset({"chat", "continue"}),
            deferred_keys("core.flows.memory.replaying", "turn_keys"),
            key_label="感情",
        ),
        FlowInfo(  # spec 04
            DIAGNOSIS,
            deferred_persona("core.flows.diagnosis.demo", "persona"),
            DIAGNOSIS_LIMITS,
            deferred_factory("core.flows.diagnosis.replaying", "diagnosis_runner"),
            DIAGNOSIS_STEPS,
            deferred_keys("core.flows.diagnosis.replaying", "diagnosis_keys"),
            key_label="行動",
            second_key_label="緊急度",
            call_free_turns=True,
            request_turns=True,
        ),
    )
}


def demo_personas(names: Iterable[str] | None = None) -> dict[str, Persona]:
    """flow name -> demo persona, for `DemoClient(personas=...)` / `build_client(personas=...)`.

    All registered flows by default, or only `names` (KeyError for a name that is not registered).
    """
    chosen = FLOWS.values() if names is None else [FLOWS[name] for name in names]
    return {info.name: info.demo_persona for info in chosen}


def demo_client(model: str = "katachi-demo") -> DemoClient:
    """The offline demo model playing every registered flow (tests, scripts, sample loading)."""
    return DemoClient(model, personas=demo_personas())
