"""The `agent` commands: one module per command (or command group), named after it, each listed once in
agent/cli.py. A module imports only typer and the standard library at the top; everything else is imported
inside the command, so `agent --help` and shell completion do not load models, MCP or pydantic."""
