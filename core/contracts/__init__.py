"""The contracts with a model: JSON Schemas (loading, validators, strict copies), their typed shapes, prompts.

`schemas` loads schemas/*.schema.json and caches one validator per schema; `strict_copies` makes the
strict-mode copy a provider's structured output wants; `schema_types` has one TypedDict per schema;
`prompts` loads prompts/* by name and fills their placeholders.
"""
