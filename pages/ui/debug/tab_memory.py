"""Widget values that outlive a hidden tab.

With `st.tabs(on_change="rerun")` the code of a hidden tab does not run, and Streamlit forgets the state of
every widget that was not drawn in a run. Without this, a prompt typed in the debug page's re-run
playground or the conversation chosen for a replay would be empty or reset after a look at another tab.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

KEPT = "tab_memory"  # data key: {widget key: its last value}


def _any(_: Any) -> bool:
    return True


def restore(key: str, valid: Callable[[Any], bool] = _any) -> bool:
    """Before drawing widget `key`: put its remembered value back when Streamlit has forgotten it and
    `valid(value)` holds (e.g. the option still exists). True when the widget has a value in the state."""
    kept = st.session_state.get(KEPT, {})
    if key not in st.session_state and key in kept and valid(kept[key]):
        st.session_state[key] = kept[key]
    return key in st.session_state


def remember(*keys: str) -> None:
    """After drawing the widgets `keys`: remember their current values."""
    kept = st.session_state.setdefault(KEPT, {})
    for key in keys:
        if key in st.session_state:
            kept[key] = st.session_state[key]
