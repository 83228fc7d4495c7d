"""Katachi shell: page config, sign-in, session defaults, provider settings in the sidebar, navigation."""

from pathlib import Path

import streamlit as st

from core.services import StoreBusy
from pages.ui.shell import auth, sidebar, state
from pages.ui.shell.error_card import store_busy_card
from pages.ui.shell.nav import HOME, existing_pages

# A file shipped with the app, not a `:material/...:` icon: for those the browser fetches the favicon
# from a public font host, which an intranet cannot reach.
ICON = str(Path(__file__).resolve().parent / "core" / "samples" / "icons" / "katachi.png")

st.set_page_config(page_title="Katachi", page_icon=ICON, layout="wide")
st.logo(ICON, size="medium")
person = auth.sign_in()  # before anything else: with [auth], nothing but the sign-in page until signed in
if person is None:
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
        state.start_jobs()  # the background worker and the owed-work sweep (once per process)
except StoreBusy as exc:
    store_busy_card(str(exc))
