"""The debug workbench: the top layer of core, over the flows (pandas, no Streamlit).

`tree` (conversation -> turn -> call -> attempts), `notes`, `diff` (a repaired call's attempts side by
side), `report` (tables over the events), `prices` and `cost`, `ratings` (feedback beside the log),
`log_import` (an uploaded export, checked), `otel` (OpenTelemetry export), `rerun` (one recorded call
again, on several models) and `replay` with `replay_flows` (each flow's runner from core.flows.registry) and `replay_budget`
(a whole exported conversation through its flow).
"""
