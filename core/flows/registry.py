"""The flows of the app in one table: flow name -> FlowInfo (its chat key and its demo persona).

Each flow's demo module exposes its persona function; this table is where they are collected, so that
core.llm never imports a flow. The shell (pages/ui/shell/nav.py names each page's flow from here) and tests or
scripts that want the demo model to play the flows take the personas from `demo_personas()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.flows.diagnosis.constants import FLOW_TAG as DIAGNOSIS
from core.flows.diagnosis.demo import persona as diagnosis_persona
from core.flows.knowledge.demo import knowledge_persona
from core.flows.knowledge.interview import FLOW as KNOWLEDGE
from core.flows.memory.constants import FLOW as MEMORY
from core.flows.memory.demo import memory_persona
from core.flows.review_chat.constants import FLOW as REVIEW
from core.flows.review_chat.demo import review_persona
from core.llm.demo import DemoClient, Persona


@dataclass(frozen=True)
class FlowInfo:
    """One flow as the shell sees it.

    name: the flow tag, used as the chat key (`st.session_state.chat[name]`), as `tags["flow"]` of the
    flow's LLM calls (debug log grouping) and as the key of its demo persona.
    demo_persona: what the offline demo model plays for requests tagged with this flow.
    """

    name: str
    demo_persona: Persona


FLOWS: dict[str, FlowInfo] = {
    info.name: info
    for info in (
        FlowInfo(KNOWLEDGE, knowledge_persona),  # spec 00 + 01
        FlowInfo(REVIEW, review_persona),  # spec 02
        FlowInfo(MEMORY, memory_persona),  # spec 03
        FlowInfo(DIAGNOSIS, diagnosis_persona),  # spec 04
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
