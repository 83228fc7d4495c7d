"""Deadlines for provider calls: connect, first byte, and an overall deadline per call.

The settings value only; core.llm.deadline_transport applies it to the SDKs' HTTP client (kept apart so
loading settings does not import the HTTP stack).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_CONNECT_S = 10.0
DEFAULT_FIRST_BYTE_S = 60.0
DEFAULT_TOTAL_S = 120.0


def _seconds(value: str | None, default: float) -> float:
    try:
        number = float(value) if value else default
    except ValueError:
        return default
    return number if number > 0 else default


@dataclass(frozen=True)
class Deadlines:
    """Seconds to connect, to the first byte of the response (and between bytes), and for the whole call."""

    connect: float = DEFAULT_CONNECT_S
    first_byte: float = DEFAULT_FIRST_BYTE_S
    total: float = DEFAULT_TOTAL_S

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Deadlines:
        """KATACHI_TIMEOUT_CONNECT, KATACHI_TIMEOUT_FIRST_BYTE, KATACHI_TIMEOUT_TOTAL (seconds)."""
        env = os.environ if env is None else env
        return cls(
            _seconds(env.get("KATACHI_TIMEOUT_CONNECT"), DEFAULT_CONNECT_S),
            _seconds(env.get("KATACHI_TIMEOUT_FIRST_BYTE"), DEFAULT_FIRST_BYTE_S),
            _seconds(env.get("KATACHI_TIMEOUT_TOTAL"), DEFAULT_TOTAL_S),
        )

    @classmethod
    def from_timeout(cls, timeout: float) -> Deadlines:
        """The deadlines a single `timeout` stands for: per operation `timeout`, the whole call twice that."""
        return cls(min(DEFAULT_CONNECT_S, timeout), timeout, timeout * 2)
