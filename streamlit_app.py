"""Katachi shell: page config, session defaults, provider settings in the sidebar, navigation."""

import streamlit as st

from pages.ui import sidebar, state
from pages.ui.nav import HOME, existing_pages

st.set_page_config(page_title="Katachi", page_icon=":material/category:", layout="wide")
state.init_session()


sidebar.render()
state.client()  # build (or rebuild) the session's client before any page runs
pages = [st.Page(p.path, title=p.title, icon=p.icon, default=p is HOME) for p in existing_pages()]
navigation = st.navigation(pages)
state.follow_deep_link()
navigation.run()
