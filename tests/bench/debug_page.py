"""Benchmark of the debug page (issue #9) on 2,000 synthetic events (20 conversations of four flows,
repaired calls, child summaries, notes): building the tree, the cost sums, the exports, and the page's
server-side run per tab (AppTest run of pages/debug_log.py with the events in session_state).

Targets: build the tree ≤ 50 ms; the page's server-side run ≤ 1.5 s. Printed, never asserted.
Run: .venv/bin/python tests/bench/debug_page.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from streamlit.testing.v1 import AppTest

from core.debuglog.events import events_to_csv, events_to_jsonl
from core.settings import Settings
from core.workbench.otel import events_to_otlp
from core.workbench.prices import costs_by_flow, load_prices
from core.workbench.report import calls_frame
from core.workbench.tree import build_tree
from tests.debug_logs import synthetic_log
from tests.pages.conftest import APP

EVENTS = 2000
TABS = ["トレース", "呼び出し一覧", "コストと傾向", "エクスポート"]


def median_ms(fn: Callable[[], Any], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def page_runs(events: list[Any]) -> list[tuple[str, float]]:
    """The page's server-side run per tab: the first run after switching to it, then a rerun."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["app_settings"] = Settings(data_dir=Path(tmp))
        at.run()
        at.session_state["debug_logs"] = events
        at.switch_page("pages/debug_log.py")
        start = time.perf_counter()
        at.run()
        rows.append(("page, first run (トレース, tree built)", (time.perf_counter() - start) * 1000))
        assert not at.exception, at.exception
        for tab in TABS:
            at.session_state["debug_tab"] = tab
            times = []
            for _ in range(3):
                start = time.perf_counter()
                at.run()
                times.append((time.perf_counter() - start) * 1000)
                assert not at.exception, at.exception
            rows.append((f"page rerun, tab 「{tab}」 (median of 3)", statistics.median(times)))
    return rows


def main() -> None:
    events = synthetic_log(EVENTS)
    tree = build_tree(events)
    prices = load_prices()
    calls = sum(len(c.all_calls()) for c in tree)
    print(f"{len(events)} events, {len(tree)} conversations, {calls} calls")
    print("| step | median ms | target |\n|---|---:|---:|")
    print(f"| build_tree | {median_ms(lambda: build_tree(events)):.1f} | ≤ 50 |")
    print(f"| costs per flow | {median_ms(lambda: costs_by_flow(tree, prices)):.1f} | |")
    print(f"| calls_frame (table) | {median_ms(lambda: calls_frame(events, prices), 5):.1f} | |")
    print(f"| JSONL export | {median_ms(lambda: events_to_jsonl(events), 5):.1f} | |")
    print(f"| CSV export | {median_ms(lambda: events_to_csv(events), 5):.1f} | |")
    print(f"| OTLP/JSON export | {median_ms(lambda: events_to_otlp(events), 5):.1f} | |")
    for name, ms in page_runs(events):
        print(f"| {name} | {ms:.0f} | ≤ 1500 |")


if __name__ == "__main__":
    main()
