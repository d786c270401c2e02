"""Small-model strategies around the agent loop: one interface (agent/strategies/base.py), one module each.

A workflow runs a chain of them ending in the loop (agent/workflows/runs.py `run_agent`); the loop knows none of
them. Nothing is imported here, so a module can import one strategy without loading the others."""
