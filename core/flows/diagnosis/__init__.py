"""Vehicle diagnosis flow (spec 04): state machine, handlers, urgency, guards, RAG over manuals, booking."""
