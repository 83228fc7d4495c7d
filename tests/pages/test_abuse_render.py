"""Issue #15 item 4: every place that renders model-derived text gets the same hostile payload, and
nothing it renders as Markdown (text, captions, alerts, labels, expanders) can fetch or run anything.

A HostileClient (tests/abuse/hostile.py) plants the payload in every reply of every flow; each page
runs its one-click demo (and the memory page a turn with the browser and search tabs), then the debug
page shows the calls. Code blocks, st.text, st.json and tables show text literally and are not checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.flows.knowledge import base as kb
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.background import memory_job_key
from core.people import LOCAL_PERSON, person_from_claims
from core.store import open_store
from pages.ui.shell.render import llm_label, plain_label
from pages.ui.shell.state import worker
from tests.abuse.hostile import MARK, HostileClient, live_parts
from tests.pages.conftest import JOB_WAIT_S, claims, make_app, make_signed_in_app

MARKDOWN_ELEMENTS = ("markdown", "caption", "error", "warning", "info", "success", "subheader", "title")
LABELLED = ("button", "expander", "toggle", "checkbox", "tabs", "radio")


def rendered(at: AppTest) -> list[tuple[str, str]]:
    """(element kind, Markdown text) of everything on the page that Streamlit renders as Markdown."""
    found: list[tuple[str, str]] = []
    for kind in MARKDOWN_ELEMENTS:
        found += [(kind, str(e.value)) for e in getattr(at, kind)]
    for kind in LABELLED:
        found += [(kind, str(getattr(e, "label", ""))) for e in getattr(at, kind)]
    return found


def assert_inert(at: AppTest, page: str) -> None:
    assert not at.exception, at.exception
    shown = rendered(at)
    live = [(kind, part, text[:120]) for kind, text in shown for part in live_parts(text)]
    assert not live, f"{page}: {live[:5]}"


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def demo(tmp_path: Path, page: str, flow: str) -> AppTest:
    at = make_app(tmp_path, client=HostileClient(), page=page)  # type: ignore[arg-type]
    at.session_state[f"{flow}_demo_request"] = True
    return run(at)


def marked(at: AppTest) -> bool:
    return any(MARK in text for _, text in rendered(at))


@pytest.mark.parametrize(
    ("page", "flow"),
    [
        ("pages/knowledge.py", "knowledge"),
        ("pages/review_chat.py", "review"),
        ("pages/diagnosis.py", "diagnosis"),
    ],
)
def test_chat_pages_render_the_payload_inert(tmp_path: Path, page: str, flow: str) -> None:
    at = demo(tmp_path, page, flow)
    assert marked(at), f"{page}: the payload never reached a renderer"
    assert_inert(at, page)
    at.switch_page("pages/debug_log.py")
    run(at)
    assert_inert(at, "debug_log")


def test_memory_page_chat_details_browser_and_search(tmp_path: Path) -> None:
    at = make_app(tmp_path, client=HostileClient(), page="pages/memory.py")  # type: ignore[arg-type]
    at.chat_input(key="memory_input").set_value("同僚の田中さんと新宿でラーメンを食べたよ").run()
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)
    run(at)
    assert marked(at)
    assert_inert(at, "memory chat")
    for unit_id in (1, 2, 3):  # the episode, then facts / entities from it
        at.session_state["memory_unit_id"] = unit_id
        run(at)
        assert_inert(at, f"memory detail #{unit_id}")
    at.text_input(key="memory_search_query").input("田中さんとラーメン")
    search = next((b for b in at.button if b.key == "memory_search_run"), None)
    if search is not None:
        search.click()
    run(at)
    assert_inert(at, "memory search")


def test_hostile_entries_in_labels_are_made_safe() -> None:
    # choices, entity names and other labels pass through llm_label (pages/ui/shell/render.py)
    label: Any = llm_label(MARK + " ![x](http://127.0.0.1:9/p) <b>x</b>")
    assert live_parts(label) == []


# A name and email as an identity provider could send them (issue #14): not model text, but shown as plain text.
HOSTILE_NAME = f"{MARK} ![x](http://127.0.0.1:9/n) <img src=x> [a](javascript:x) :material/home: **b**"
HOSTILE_EMAIL = "<img src=http://127.0.0.1:9/e>@example.com"


def test_names_from_the_identity_provider_render_as_plain_text(tmp_path: Path) -> None:
    user = claims("mallory", HOSTILE_NAME, HOSTILE_EMAIL)
    person = person_from_claims(user)
    assert person is not None and person.name == HOSTILE_NAME
    entry = {
        "contract_type": "秘密保持契約",
        "knowledge_title": "存続期間",
        "target_clause": "第8条",
        "review_points": "存続期間",
        "action_plan": "5年とする",
        "clause_sample": "本契約終了後5年間存続する。",
    }
    base = knowledge_stores(open_store(tmp_path), person).base
    entry_id, _ = kb.save_draft(base, entry, by=person, interview_id=None, saved_entry_id=None)
    at = make_signed_in_app(tmp_path, user)
    sidebar = [str(e.value) for kind in ("markdown", "caption") for e in getattr(at.sidebar, kind)]
    assert any(MARK in text for text in sidebar), sidebar
    assert_inert(at, "sidebar")
    at.session_state["knowledge_base_pick"] = (
        entry_id  # the entry editor: 作成 / 更新 / 編集者 name the author
    )
    at.switch_page("pages/knowledge.py")
    run(at)
    assert sum(MARK in text for _, text in rendered(at)) >= 2
    assert_inert(at, "knowledge base editor")
    assert ":material/" not in plain_label(HOSTILE_NAME) and "**" not in plain_label(HOSTILE_NAME)
