"""Redirections in the approval analysis: where `>` and friends write, what standard input becomes (a file, a
herestring's or heredoc's text, a pipe), and the statements tree-sitter-bash nests inside a heredoc's redirect.

Functions the walker (walker.py) calls with itself: they check targets and hand what runs back to it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from tree_sitter import Node

from tools.approval.bash_syntax import REDIRECTS, Arg, Unknown, static_value, text, word_values
from tools.approval.calls import Kind
from tools.approval.folders import State, settle
from tools.approval.paths import write_target_problem


class Walker(Protocol):
    """What these functions use of the walker (walker.py), which calls them with itself: named here, so that
    this module does not import the one that imports it."""

    workspace: Path
    writes: list[str]

    def danger(self, node: Node | str, reason: str, kind: Kind = "destructive") -> None: ...

    def statement(self, node: Node, state: State, depth: int, stdin: Arg | str = "inherited") -> State: ...

    def pipeline(self, items: list[Node], state: State, depth: int, first_stdin: Arg | str) -> None: ...

    def expression(self, node: Node, state: State, depth: int) -> None: ...


def redirected(walker: Walker, node: Node, state: State, depth: int, stdin: Arg | str) -> State:
    """A statement with redirections (`cmd > f`, `{ ...; } <<EOF | next`): the redirections, the body, then
    what a heredoc carried after it."""
    body = node.child_by_field_name("body")
    continuations: list[tuple[str, Node]] = []
    for child in node.named_children:
        if child.type in REDIRECTS:
            stdin = redirect(walker, child, state, depth, stdin, continuations)
    after = state
    if body is not None:
        after = walker.statement(body, state, depth + 1, stdin)
    for op, continuation in continuations:
        if continuation.type == "pipeline" and continuation.children and continuation.children[0].type in ("|", "|&"):
            walker.pipeline(continuation.children, after, depth + 1, "pipe")
        elif op in ("|", "|&"):
            walker.statement(continuation, after, depth + 1, "pipe")
        else:
            after = walker.statement(continuation, after if op == "&&" else settle(after), depth + 1)
    return after


def redirect(
    walker: Walker, node: Node, state: State, depth: int, stdin: Arg | str, continuations: list[tuple[str, Node]]
) -> Arg | str:
    """Checks where a redirection writes; returns what standard input becomes."""
    kind = node.type
    if kind == "file_redirect":
        walker.expression(node, state, depth)
        op = next((c.type for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination") or (
            node.named_children[-1] if node.named_children else None
        )
        if destination is None:
            return stdin
        if ">" in op and not (op in (">&", "<&") and re.fullmatch(r"\d+-?|-", text(destination))):
            for target in word_values(destination):
                walker.writes.append(target if isinstance(target, str) else target.text)
                if isinstance(target, Unknown):
                    walker.danger(
                        node,
                        f"writes to a file named by an expansion (`{target.text}`) that cannot be checked here",
                        "unchecked",
                    )
                elif problem := write_target_problem(target, state.cwd, walker.workspace):
                    walker.danger(node, problem)
        return "file" if op == "<" else stdin
    if kind == "herestring_redirect":
        walker.expression(node, state, depth)
        words = list(node.named_children)
        value = static_value(words[-1]) if words else ""
        return value if value is not None else Unknown(text(words[-1]))
    # heredoc: `cmd <<EOF | next` puts `| next` (and `&& next`, more redirects) inside the redirect node
    op = ""
    content: Arg | str = stdin
    quoted = False
    for child in node.children:
        if child.type == "heredoc_start":
            quoted = bool(re.search(r"['\"\\]", text(child)))
        elif child.type == "heredoc_body":
            content = heredoc(walker, child, node, quoted, state, depth)
        elif child.type in REDIRECTS:
            redirect(walker, child, state, depth, stdin, continuations)
        elif child.is_named and child.type != "heredoc_end":
            continuations.append((op, child))
        elif not child.is_named:
            op = child.type
    return content


def heredoc(walker: Walker, body: Node, redirect: Node, quoted: bool, state: State, depth: int) -> Arg:
    """The text a heredoc gives standard input: as written when its delimiter is quoted, else after `\\`
    removal, Unknown when it holds an expansion (whose `$(...)` the walker reads: they run)."""
    raw = text(body)
    if any(c.type == "<<-" for c in redirect.children):
        raw = "\n".join(line.lstrip("\t") for line in raw.split("\n"))
    if quoted:
        return raw
    walker.expression(body, state, depth)  # `$(...)` in an unquoted heredoc runs
    if any(c.is_named and c.type != "heredoc_content" for c in body.children):
        return Unknown(raw[:80])
    return re.sub(r"\\([$`\\])", r"\1", raw.replace("\\\n", ""))
