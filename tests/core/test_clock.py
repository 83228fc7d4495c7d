"""One time encoding: UTC epoch seconds stored; Japan time (or KATACHI_TIMEZONE) on every screen."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from core.clock import display_zone, format_local, from_local, to_local, utc_now
from core.debuglog.events import DebugEvent
from core.workbench.report import calls_frame

TS = 1_795_000_000  # 2026-11-18 11:06:40 UTC


def test_screens_show_japan_time_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KATACHI_TIMEZONE", raising=False)
    display_zone.cache_clear()
    assert format_local(TS) == "2026-11-18 20:06"
    assert to_local(TS).utcoffset().total_seconds() == 9 * 3600  # type: ignore[union-attr]
    assert format_local(None) == ""


def test_an_unknown_zone_falls_back_to_tokyo_and_a_known_one_is_used() -> None:
    assert format_local(TS, zone="Mars/Olympus") == "2026-11-18 20:06"
    assert format_local(TS, zone="UTC") == "2026-11-18 11:06"


def test_a_naive_date_a_person_enters_is_local_time() -> None:
    assert from_local(datetime(2026, 11, 18, 20, 6, 40)) == TS
    assert abs(utc_now() - time.time()) < 2


def test_the_debug_table_shows_japan_time_whatever_the_server_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        frame = calls_frame([DebugEvent("review", "reply", "call", ts=TS)])
        assert list(frame["時刻"]) == ["20:06:40"]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
