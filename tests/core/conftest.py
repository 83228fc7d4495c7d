"""Fixtures for core tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.wire_server import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A scripted OpenAI/Anthropic wire-format server on a free local port."""
    with WireServer() as server:
        yield server
