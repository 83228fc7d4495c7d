"""The knowledge interview and the shared knowledge base (spec 00 + 01)."""
