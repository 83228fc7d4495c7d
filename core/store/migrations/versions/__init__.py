"""Revisions, oldest first: v0001 baseline (the schema of the create_all era), then one file per change."""
