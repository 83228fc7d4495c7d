"""The review chat page: material, session, thread management, the form preview."""
