"""The app's icon as the browser tab's favicon and the sidebar's logo.

For any image Streamlit imports numpy and PIL (`image_to_url`), about 60 ms on the first script run of a process,
the first paint after every start. `prewarm()` imports them on a thread of their own as the shell starts, so the
import runs beside the shell's own imports and the sidebar instead of after them; `show()` is called before
st.navigation, because a page drawn before the app's favicon is set lends the tab its own `:material/...:` icon,
which the browser fetches from a public font host (tests/e2e/test_abuse_e2e.py holds that nothing is fetched).
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

import streamlit as st

# A file shipped with the app, not a `:material/...:` icon: for those the browser fetches the favicon from a
# public font host, which an intranet cannot reach.
ICON = str(Path(__file__).resolve().parents[3] / "core" / "samples" / "icons" / "katachi.png")


def _import_image_libraries() -> None:
    import numpy  # noqa: F401, PLC0415 - see the module's docstring
    import PIL.Image  # noqa: PLC0415
    import PIL.ImageFile  # noqa: F401, PLC0415


@cache
def prewarm() -> threading.Thread:
    """Start importing numpy and PIL on a thread (once per process)."""
    thread = threading.Thread(target=_import_image_libraries, name="katachi-image-imports", daemon=True)
    thread.start()
    return thread


def show() -> None:
    """Set the favicon and the logo (set_page_config is additive: the title and layout set first stay)."""
    st.set_page_config(page_icon=ICON)
    st.logo(ICON, size="medium")
