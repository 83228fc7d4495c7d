"""The knowledge interview's store: interviews and their turns, the knowledge base (versioned entries) and
its keyword search keys."""
