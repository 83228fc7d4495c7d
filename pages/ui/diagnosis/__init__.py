"""The diagnosis page: the session and its widgets."""
