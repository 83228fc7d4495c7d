"""The pages' Streamlit code: `shell/` (what every page shares: state, sidebar, navigation, sign-in,
error card, last call, feedback, rendering) and one package per page (knowledge, review, memory,
diagnosis, debug)."""
