"""The guard: the one door to a model (ARCHITECTURE.md "The guard").

call -> local repair -> validate -> repair call -> result. `json_guard` (schema-bound replies) and
`text_guard` (free text and streams) are the doors; `results` holds `Attempt` and `GuardResult`;
`local_repair`, `clamps` and `reply_limits` are what the door applies to a reply on its way through;
`continuation` and `error_texts` turn a cut-short or failed reply into what a person reads.
"""
