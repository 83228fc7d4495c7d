"""The app's icon as the browser tab's favicon and the sidebar's logo.

`show()` is called before st.navigation: a page drawn before the app's favicon is set lends the tab its own
`:material/...:` icon, which the browser fetches from a public font host (tests/e2e/test_abuse_e2e.py holds that
nothing is fetched). For any image Streamlit imports numpy and PIL (`image_to_url`), about 60 ms on the first
script run of a process: the launcher (launch.py) imports them while the browser loads the frontend.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

# A file shipped with the app, not a `:material/...:` icon: for those the browser fetches the favicon from a
# public font host, which an intranet cannot reach.
ICON = str(Path(__file__).resolve().parents[3] / "core" / "samples" / "icons" / "katachi.png")


def show() -> None:
    """Set the favicon and the logo (set_page_config is additive: the title and layout set first stay)."""
    st.set_page_config(page_icon=ICON)
    st.logo(ICON, size="medium")
