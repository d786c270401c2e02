"""Allow and deny rules: which tools and which commands a rule string names (see tools/approval/__init__.py)."""

from __future__ import annotations

import fnmatch
import shlex

from tools.approval.bash_syntax import Arg
from tools.approval.wrappers import unwrap


def _split_rule(rule: str) -> tuple[str, str]:
    for kind in ("mcp", "tool", "cmd"):
        if rule.startswith(kind + ":"):
            return kind, rule[len(kind) + 1 :].strip()
    return "bare", rule.strip()


def tool_rule_matches(rule: str, tool: str, server: str | None) -> bool:
    kind, pattern = _split_rule(rule)
    if not pattern:
        return False
    if kind == "mcp":  # by the server's own name: the tool-name glob `time__*` also names `time_`'s tools
        return server is not None and fnmatch.fnmatchcase(server, pattern)
    if kind == "tool" or (kind == "bare" and len(pattern.split()) == 1):
        return fnmatch.fnmatchcase(tool, pattern)
    return False


def command_rule_matches(rule: str, words: list[str], deny: bool = False) -> bool:
    """Whether a command's words start with the rule's words; a deny rule also looks through `sudo`, `env`..."""
    kind, pattern = _split_rule(rule)
    if kind in ("mcp", "tool") or not pattern:
        return False
    prefix = split_words(pattern)
    args: list[Arg] = list(words)
    candidates = [words, [w for w in unwrap(args).words if isinstance(w, str)]] if deny else [words]
    return any(len(c) >= len(prefix) and all(fnmatch.fnmatchcase(w, p) for w, p in zip(c, prefix)) for c in candidates)


def split_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
