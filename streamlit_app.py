"""Katachi shell: page config, sign-in, session defaults, provider settings in the sidebar, navigation."""

from pathlib import Path

import streamlit as st
import streamlit.delta_generator

from core.services import StoreBusy
from pages.ui.shell import auth, sidebar, state
from pages.ui.shell.error_card import store_busy_card
from pages.ui.shell.nav import HOME, existing_pages

# Streamlit checks on the first element of a process whether it runs outside `streamlit run` (env_util.is_repl:
# inspect.stack() over every loaded module, 50-70 ms with the app's modules loaded, on the first paint after every
# start). The shell always runs under `streamlit run`, so the check is marked done (tests/pages/test_shell_and_debug.py
# holds that the flag still exists).
streamlit.delta_generator._use_warning_has_been_displayed = True

# A file shipped with the app, not a `:material/...:` icon: for those the browser fetches the favicon
# from a public font host, which an intranet cannot reach.
ICON = str(Path(__file__).resolve().parent / "core" / "samples" / "icons" / "katachi.png")


def brand() -> None:
    """The app's icon as the tab's favicon and the sidebar's logo. Sent after the page: for any image Streamlit
    imports numpy and PIL (~60 ms on the first run of a process), which then overlaps the browser drawing the
    page instead of holding the page up. set_page_config is additive, so the title and layout set first stay."""
    st.set_page_config(page_icon=ICON)
    st.logo(ICON, size="medium")


st.set_page_config(page_title="Katachi", layout="wide")
person = auth.sign_in()  # before anything else: with [auth], nothing but the sign-in page until signed in
if person is None:
    brand()
    st.navigation([st.Page(auth.sign_in_page, title="サインイン", icon=":material/login:")]).run()
    st.stop()
try:  # every connection of this replica in use: a Japanese card saying what to do, not a traceback
    state.init_session()
    auth.record(person)

    auth.render_identity(person)
    sidebar.render()
    state.client()  # build (or rebuild) the session's client before any page runs
    pages = [st.Page(p.path, title=p.title, icon=p.icon, default=p is HOME) for p in existing_pages()]
    navigation = st.navigation(pages)
    state.follow_deep_link()
    try:
        navigation.run()
    finally:  # after the page has drawn: the opening's imports and migrations do not hold up the first paint
        brand()
        state.start_jobs()  # the background worker and the owed-work sweep (once per process)
except StoreBusy as exc:
    brand()
    store_busy_card(str(exc))
