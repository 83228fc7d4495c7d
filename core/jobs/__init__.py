"""Background work that follows a reply (memory extraction, summaries): `worker.BackgroundWorker`."""
