"""Katachi shell: page config, sign-in, session defaults, provider settings in the sidebar, navigation."""

import streamlit as st
import streamlit.delta_generator

from core.services import StoreBusy
from pages.ui.shell import auth, brand, sidebar, state
from pages.ui.shell.error_card import store_busy_card
from pages.ui.shell.nav import HOME, existing_pages

# Streamlit checks on the first element of a process whether it runs outside `streamlit run` (env_util.is_repl:
# inspect.stack() over every loaded module, 50-70 ms with the app's modules loaded, on the first paint after every
# start). The shell always runs under `streamlit run`, so the check is marked done (tests/pages/test_shell_and_debug.py
# holds that the flag still exists).
streamlit.delta_generator._use_warning_has_been_displayed = True

st.set_page_config(page_title="Katachi", layout="wide")
person = auth.sign_in()  # before anything else: with [auth], nothing but the sign-in page until signed in
if person is None:
    brand.show()
    st.navigation([st.Page(auth.sign_in_page, title="サインイン", icon=":material/login:")]).run()
    st.stop()
try:  # every connection of this replica in use: a Japanese card saying what to do, not a traceback
    state.init_session()
    auth.record(person)

    auth.render_identity(person)
    sidebar.render()
    state.client()  # build (or rebuild) the session's client before any page runs
    pages = [st.Page(p.path, title=p.title, icon=p.icon, default=p is HOME) for p in existing_pages()]
    brand.show()  # before the navigation: its pages' icons must never become the favicon
    navigation = st.navigation(pages)
    state.follow_deep_link()
    try:
        navigation.run()
    finally:  # after the page has drawn: the opening's imports and migrations do not hold up the first paint
        state.start_jobs()  # the background worker and the owed-work sweep (once per process)
except StoreBusy as exc:
    brand.show()
    store_busy_card(str(exc))
