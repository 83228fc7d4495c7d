"""The review chat's tables, plain records, repository, material management and the upgrade of old rows."""
