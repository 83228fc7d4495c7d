"""AppTest: no internal word (a flow id, call step, result or error type, local repair, injected fault, schema
enum value such as a phase, mode or action, chat status, event kind) shows on any page in typical states,
after each page's one-click demo: outside code and the views labelled as raw, every such word is shown in
Japanese (pages/ui/shell/words.py). The vocabulary comes from the code's constants and the schemas."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.debuglog.events import DebugEvent
from core.flows.chat_item import STATUSES
from core.flows.registry import FLOWS
from core.guard.error_texts import ERROR_TYPE_LABELS, PLAIN_SENTENCES
from core.llm.faulty import FAULT_KINDS
from pages.ui.shell import words
from tests.pages.conftest import make_app

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
# Expanders and labels of views that show raw values on purpose (what the model returned, as JSON).
RAW_VIEW = re.compile(r"生の|JSON|トレーラー（原文）")
CODE_SPAN = re.compile(r"`[^`]*`")
URL = re.compile(r"\S*(?:https?://|[/?=&])\S*")


def _schema_enums() -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(v for v in node.get("enum", []) if isinstance(v, str))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in SCHEMAS.glob("*.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


VOCABULARY = (
    set(FLOWS)
    | set(words.STEPS)
    | set(ERROR_TYPE_LABELS)
    | set(words.RESULTS)
    | set(PLAIN_SENTENCES)
    | set(words.FIXES)
    | set(FAULT_KINDS)
    | _schema_enums()
    | set(STATUSES)
    | {kind for kind in ("call", "error", "note") if kind in DebugEvent.__dataclass_fields__["kind"].type}
    | set(words.FINISH_REASONS)
) - {"SPEAKER"}  # the speaker is shown as ユーザー; a literal SPEAKER would be caught as a name below


def _texts(node: Any, raw: bool = False) -> Iterator[tuple[str, str]]:
    """(where, text) of everything a person reads under `node`, skipping code, JSON and raw views."""
    kind = getattr(node, "type", "")
    if kind in ("code", "json", "text", "text_area"):  # code, JSON, and the prompts shown as sent (monospace)
        return
    if kind == "html" and str(getattr(node, "value", "")).lstrip().startswith("<script"):
        return  # a script (the chat pages' scroll to the newest turn) is code nobody reads
    label = str(getattr(node, "label", "") or "")
    if kind == "expander" and RAW_VIEW.search(label):
        raw = True
    if raw:
        return
    for attr in ("value", "label", "placeholder", "help"):
        value = getattr(node, attr, None) if attr != "value" or kind not in ("dataframe",) else None
        if isinstance(value, str) and value:
            yield f"{kind}.{attr}", value
    for option in getattr(node, "options", None) or []:
        yield f"{kind}.option", str(option)
    if kind in ("dataframe", "arrow_data_frame"):
        yield from _table(node)
    for child in getattr(node, "children", {}).values() if hasattr(node, "children") else []:
        yield from _texts(child, raw)


def _table(node: Any) -> Iterator[tuple[str, str]]:
    """A table's headers and cells as the browser shows them: column labels and select options' labels of
    its column config, hidden columns left out."""
    config = json.loads(node.proto.columns or "{}")
    frame = node.value
    for column in frame.columns:
        conf = config.get(str(column), {})
        if conf.get("hidden"):
            continue
        yield "dataframe.column", str(conf.get("label") or column)
        labels = {
            o["value"]: o["label"] for o in conf.get("type_config", {}).get("options", []) if "label" in o
        }
        for cell in frame[column]:
            for item in cell if isinstance(cell, list | tuple) else [cell]:
                if isinstance(item, str):
                    yield f"dataframe[{column}]", labels.get(item, item)


def leaks(at: AppTest) -> list[str]:
    """The internal words on screen, with where they stand."""
    found = []
    for where, text in _texts(at._tree):
        plain = URL.sub(" ", CODE_SPAN.sub(" ", text.replace("\\_", "_")))
        for word in words.internal_words(plain):
            if word in VOCABULARY:
                found.append(f"{where}: {word} ← {text[:80]!r}")
    return sorted(set(found))


def _demo(at: AppTest, page: str, flow: str) -> None:
    at.session_state[f"{flow}_demo_request"] = True
    at.switch_page(page)
    at.run(timeout=120)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> AppTest:
    """One session: home, then each flow page after its one-click demo (the debug log fills as they run)."""
    return make_app(tmp_path_factory.mktemp("words"))


def test_home_shows_no_internal_word(app: AppTest) -> None:
    assert leaks(app) == []


@pytest.mark.parametrize(
    ("page", "flow"),
    [
        ("pages/knowledge.py", "knowledge"),
        ("pages/review_chat.py", "review"),
        ("pages/memory.py", "memory"),
        ("pages/diagnosis.py", "diagnosis"),
    ],
)
def test_a_flow_page_after_its_demo_shows_no_internal_word(app: AppTest, page: str, flow: str) -> None:
    _demo(app, page, flow)
    assert not app.exception, [e.value for e in app.exception]
    assert leaks(app) == []


@pytest.mark.parametrize("table", ["事実", "約束（ループ）", "サマリー", "エンティティ", "関係（エッジ）"])
def test_each_memory_table_shows_no_internal_word(app: AppTest, table: str) -> None:
    app.session_state["memory_table"] = table
    app.switch_page("pages/memory.py")
    app.run(timeout=120)
    assert not app.exception, [e.value for e in app.exception]
    assert leaks(app) == []


@pytest.mark.parametrize("tab", ["トレース", "呼び出し一覧", "コストと傾向", "エクスポート", "リプレイ"])
def test_each_debug_tab_after_the_demos_shows_no_internal_word(app: AppTest, tab: str) -> None:
    app.session_state["debug_tab"] = tab
    app.switch_page("pages/debug_log.py")
    app.run(timeout=120)
    assert not app.exception, [e.value for e in app.exception]
    assert leaks(app) == []


def test_the_check_finds_a_leak() -> None:
    """The walk reads tables, options and markdown, and skips code spans and URLs."""
    at = AppTest.from_string(
        "import streamlit as st\n"
        "import pandas as pd\n"
        "st.markdown('結果: schema_error と `truncated` と /debug_log?flow=memory')\n"
        "st.selectbox('絞り込み', ['ok', 'すべて'])\n"
        "st.dataframe(pd.DataFrame({'フロー': ['diagnosis']}))\n"
        "with st.expander('生の出力'):\n"
        "    st.write('finalize')\n"
    ).run()
    assert sorted({line.split(": ")[1].split(" ")[0] for line in leaks(at)}) == [
        "diagnosis",
        "ok",
        "schema_error",
    ]
