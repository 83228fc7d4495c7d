"""The memory page: chat, search, browser, details, entities, job status."""
