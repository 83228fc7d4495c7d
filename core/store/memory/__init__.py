"""The companion memory's tables, repository and keyword lanes (one interface, a module per engine)."""
