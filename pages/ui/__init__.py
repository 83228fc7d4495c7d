"""Shared Streamlit helpers for the pages (the only place pages get the client, store, and debug sink)."""
