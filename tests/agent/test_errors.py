"""Every error a lower layer raises about something the user can fix reaches the CLI as one `error:` line: it is
listed in `user_errors()`. A new exception class in `inference/` or `tools/` must be listed there or below."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from agent.errors import user_errors

ROOT = Path(__file__).resolve().parents[2]
# Never shown to the user as such: each is caught, or becomes a message to the model, where it is raised.
INTERNAL = {
    "tools.base.ToolError": "an error result for the model",
    "tools.mcp.UnusableTool": "the MCP tool is left out with a warning",
    "tools.mcp_stdio.OversizedMessage": "the MCP transport's own",
    "tools.mcp_stdio.ReplyTooBig": "the MCP transport's own",
    "tools.mcp_client.MCPCallError": "an error result for the model",
    "tools.approval.walker.Stop": "the analysis's bound: an unchecked danger",
    "inference.shape.ShapeError": "memplan reports it in the plan",
}


def exception_classes() -> list[str]:
    found = []
    for package in ("inference", "tools"):
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                bases = [ast.unparse(b) for b in node.bases] if isinstance(node, ast.ClassDef) else []
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    found.append(f"{module}.{node.name}")  # type: ignore[union-attr]
    return found


def test_every_lower_layer_error_is_a_user_error_or_known_to_be_internal():
    unlisted = []
    for qualified in exception_classes():
        module, _, name = qualified.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        if qualified not in INTERNAL and not issubclass(cls, user_errors()):
            unlisted.append(qualified)
    assert unlisted == [], "add these to agent/errors.py user_errors() (or to INTERNAL here, saying why)"


def test_the_internal_list_names_classes_that_exist():
    assert set(INTERNAL) <= set(exception_classes())
