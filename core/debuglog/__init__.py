"""The debug log as it is written: `DebugEvent`, redaction of secrets, sinks (`events`), and where a
model call sits in a conversation (`trace`). The workbench reads what these write.
"""
