"""The debug-log page: calls, trace tree, attempts, diff, costs, export, re-run and replay."""
