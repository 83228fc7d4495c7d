"""Time in one encoding: UTC epoch seconds (an int) in the database and in core; local time only on screens.

Every repository takes a `Clock` (a function returning UTC epoch seconds), so tests pass a fixed one.
Screens format with `format_local`, in the display time zone (Asia/Tokyo by default; `KATACHI_TIMEZONE`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Clock = Callable[[], int]
DEFAULT_TIMEZONE = "Asia/Tokyo"


def utc_now() -> int:
    """The current time as UTC epoch seconds (the default clock)."""
    return int(time.time())


@lru_cache(maxsize=8)
def display_zone(name: str | None = None) -> ZoneInfo:
    """The zone screens show times in: `name`, else KATACHI_TIMEZONE, else Asia/Tokyo (also when unknown)."""
    wanted = name or os.environ.get("KATACHI_TIMEZONE") or DEFAULT_TIMEZONE
    try:
        return ZoneInfo(wanted)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo(DEFAULT_TIMEZONE)


def to_local(ts: float, zone: str | None = None) -> datetime:
    """An epoch timestamp as an aware datetime in the display zone."""
    return datetime.fromtimestamp(ts, tz=UTC).astimezone(display_zone(zone))


def format_local(ts: float | None, fmt: str = "%Y-%m-%d %H:%M", zone: str | None = None) -> str:
    """An epoch timestamp as local text for screens ("" for None)."""
    return "" if ts is None else to_local(ts, zone).strftime(fmt)


def from_local(value: datetime, zone: str | None = None) -> int:
    """A datetime a person entered (naive = display zone) as UTC epoch seconds."""
    aware = value if value.tzinfo else value.replace(tzinfo=display_zone(zone))
    return int(aware.timestamp())
