"""The walk over a bash parse for the approval analysis (analysis.py): every simple command, in order, with the
folder `cd` left it in and what its standard input is; each command's dangers asked of dangers.py.

Lists, pipelines, subshells, compound commands, functions and `$(...)`/`<(...)` anywhere are walked here;
redirections and heredocs in redirects.py. Past MAX_DEPTH nesting, MAX_PARTS statements and words, or the time
budget the walk raises `Stop`, which the analysis turns into an "unchecked" danger.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from inference.errors import DflashError
from tools.approval.bash_syntax import (
    ARITHMETIC,
    CONDITIONAL,
    DATA,
    DECLARATIONS,
    EMBEDDED,
    REDIRECTS,
    SEQUENCES,
    STATEMENTS,
    SUBSTITUTIONS,
    WORDS,
    Arg,
    ParseTimeout,
    Unknown,
    first_error,
    parse,
    static_value,
    text,
    word_values,
)
from tools.approval.calls import Call, Danger, Kind
from tools.approval.dangers import DOWNLOADERS, assignment_dangers, command_dangers
from tools.approval.folders import State, change_dir, merge, settle
from tools.approval.redirects import redirect, redirected
from tools.approval.wrappers import ASSIGNMENT, program_name, unwrap

MAX_DEPTH = 40  # nested scripts, substitutions and compound commands
MAX_PARTS = 50_000  # statements and words read, nested scripts included

JOINED_LINES = re.compile(r"[^\s\\]\\\n[^\s]")


class Stop(DflashError):
    """The analysis ran out of its bounds: what is left is unknown."""


@dataclass
class Walker:
    """One walk over one command line: what it found so far, and how much of its bounds it used."""

    workspace: Path
    budget_s: float  # seconds, from now
    commands: list[list[str]] = field(default_factory=list)
    dangers: list[Danger] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # every file an output redirection names, as written
    count: int = 0
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.budget_s

    def danger(self, node: Node | str, reason: str, kind: Kind = "destructive") -> None:
        self.dangers.append(Danger(command=text(node) if isinstance(node, Node) else node, reason=reason, kind=kind))

    def tick(self, parts: int = 1) -> None:
        """Counts what was read (statements, words); stops past MAX_PARTS or the time budget."""
        self.count += parts
        if self.count > MAX_PARTS:
            raise Stop(f"has more than {MAX_PARTS} parts, too many to check")
        if time.monotonic() > self.deadline:
            raise Stop(f"takes longer than {self.budget_s:g}s to check")

    # ------------------------------------------------------------ scripts and statements

    def script(self, source: str, state: State, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.danger(source[:200], "is nested too deeply to check", "unchecked")
            return
        if JOINED_LINES.search(source):  # bash joins `r\<newline>m` into `rm`; tree-sitter splits it in two
            self.danger(
                source[:200], "joins a word across lines with a backslash, which this check does not model", "unchecked"
            )
        try:
            root = parse(source.encode("utf-8", "surrogatepass"), self.deadline)
        except ParseTimeout:
            raise Stop(f"takes longer than {self.budget_s:g}s to check") from None
        if root.has_error:
            bad = first_error(root)
            where = f" near `{text(bad)[:40]}`" if bad is not None and text(bad).strip() else ""
            self.danger(source[:200], f"is not bash this check can parse{where}, so it cannot be checked", "unchecked")
        self.sequence(root, state, depth)

    def sequence(self, node: Node, state: State, depth: int) -> State:
        """Statements one after another; one sent to the background (`&`) changes no folder for the next."""
        children = node.children
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            if child.type in WORDS or child.type in ARITHMETIC:
                self.expression(child, state, depth)  # `for x in WORDS`, `case WORD in`, patterns, `(( ))`
                continue
            background = index + 1 < len(children) and children[index + 1].type == "&"
            after = self.statement(child, state, depth)
            if not background:
                state = settle(after)
        return state

    def statement(self, node: Node, state: State, depth: int, stdin: Arg | str = "inherited") -> State:
        self.tick()
        if depth > MAX_DEPTH:
            raise Stop("is nested too deeply to check")
        kind = node.type
        if kind == "command":
            return self.command(node, state, depth, stdin)
        if kind == "list":
            return self.chain(node, state, depth)
        if kind == "pipeline":
            self.pipeline([c for c in node.children if c.is_named], state, depth, "inherited")
            return state
        if kind == "redirected_statement":
            return redirected(self, node, state, depth, stdin)
        if kind == "subshell":
            self.sequence(node, state, depth + 1)
            return state
        if kind == "negated_command":
            for child in node.named_children:
                state = self.statement(child, state, depth + 1, stdin)
            return state
        if kind in SEQUENCES:
            return self.sequence(node, state, depth + 1)
        if kind in CONDITIONAL:
            return merge(state, self.sequence(node, state, depth + 1))
        if kind == "function_definition":
            for child in node.named_children:
                if child.type not in ("word",):
                    self.statement(child, State(None), depth + 1)
            return state
        if kind in DATA:
            self.expression(node, state, depth)
            return state
        if kind == "ERROR":
            self.sequence(node, state, depth + 1)
            return state
        self.danger(node, f"uses `{kind}`, which this check does not model", "unchecked")
        self.expression(node, state, depth)
        return state

    def chain(self, node: Node, state: State, depth: int) -> State:
        """`a && b || c`: after `&&` the folder a `cd` reached holds; after `||` it may not."""
        items: list[tuple[str, Node]] = []
        while node.type == "list" and len(node.children) == 3:  # `a && b || c` nests to the left: walk it flat
            left, operator, right = node.children
            items.append((operator.type, right))
            node = left
        items.append(("", node))
        items.reverse()
        current, alternative = state, False
        for op, item in items:
            if op == "||":
                alternative = True
                current = merge(state, current)
            current = self.statement(item, current, depth)
        return merge(state, current) if alternative else current

    def pipeline(self, items: list[Node], state: State, depth: int, first_stdin: Arg | str) -> None:
        """Each part runs in its own subshell; what a shell reads from a download is a downloaded script."""
        stdin: Arg | str = first_stdin
        downloaded = False
        for item in items:
            if item.type in ("|", "|&"):
                continue
            self.statement(item, state, depth + 1, stdin)
            downloaded = downloaded or _program(item) in DOWNLOADERS
            stdin = "download" if downloaded else "pipe"

    def expression(self, node: Node, state: State, depth: int) -> None:
        """Words, conditions, assignments: only their `$(...)` and `<(...)` run anything."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in SUBSTITUTIONS:
                self.tick()
                if current.children and current.children[0].type == ">(":  # `>(sh)` reads what is written to it
                    for child in current.named_children:
                        self.statement(child, state, depth + 1, "pipe")
                else:
                    self.sequence(current, state, depth + 1)
                continue
            if current.type in EMBEDDED and current is not node:  # `env (rm -rf ~)`: not bash, but parsed
                self.danger(
                    current, "has a command where bash expects a word, which this check does not model", "unchecked"
                )
                self.statement(current, state, depth + 1)
                continue
            if current.type == "variable_assignment":
                self.assignment(current, state, depth)
            stack.extend(current.children)

    def assignments(self, words: list[Arg], node: Node, state: State, depth: int) -> None:
        """`env PAGER=... git log`, `command export PATH=...`: assignments written as words."""
        for word in words:
            written = word if isinstance(word, str) else word.text
            if ASSIGNMENT.match(written):
                name, value = written.split("=", 1)
                for kind, reason in assignment_dangers(
                    name, value if isinstance(word, str) else word, lambda script: self.script(script, state, depth + 1)
                ):
                    self.danger(node, reason, kind)

    def assignment(self, node: Node, state: State, depth: int) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        values = word_values(value) if value is not None else [""]
        for kind, reason in assignment_dangers(
            text(name) if name is not None else "",
            values[0] if len(values) == 1 else Unknown(text(node)),
            lambda script: self.script(script, state, depth + 1),
        ):
            self.danger(node, reason, kind)

    # ------------------------------------------------------------ simple commands

    def command(self, node: Node, state: State, depth: int, stdin: Arg | str) -> State:
        name = node.child_by_field_name("name")
        arguments = node.children_by_field_name("argument")
        continuations: list[tuple[str, Node]] = []
        for child in node.named_children:
            if child.type in REDIRECTS:
                stdin = redirect(self, child, state, depth, stdin, continuations)
            else:
                self.expression(child, state, depth)
        for _op, continuation in continuations:
            self.statement(continuation, state, depth + 1, "pipe")
        if name is None:
            return state
        prefix = [text(c) for c in node.named_children if c.type == "variable_assignment"]
        words: list[Arg] = []
        first = word_values(name.named_children[0] if name.named_children else name)
        if len(first) != 1:  # `{rm,-rf,~}`: brace expansion makes the name and the arguments
            first = [Unknown(text(name))]
        words += first
        self.tick(len(arguments))
        for argument in arguments:
            words += word_values(argument)
        self.commands.append(prefix + [w if isinstance(w, str) else w.text for w in words])
        unwrapped = unwrap(words)
        if unwrapped.problem:
            self.danger(node, unwrapped.problem, "unchecked")
            return state
        if not unwrapped.words:
            return state
        program = program_name(unwrapped.words[0])
        if "env" in unwrapped.wrappers or program in DECLARATIONS:
            self.assignments(words[1:], node, state, depth)
        call = Call(
            program=program,
            args=unwrapped.words[1:],
            wrappers=unwrapped.wrappers,
            cwd=state.cwd,
            workspace=self.workspace,
            stdin=stdin,
        )
        for kind, reason in command_dangers(call, lambda script: self.script(script, state, depth + 1)):
            self.danger(node, reason, kind)
        if program in ("cd", "pushd"):
            return change_dir(call.args, state)
        if program == "popd":
            return State(None)
        return state


def _program(node: Node) -> str:
    """The program a pipeline part runs (its first command's static name), for `curl ... | sh`."""
    stack = [node]
    while stack:
        current = stack.pop(0)
        if current.type == "command":
            name = current.child_by_field_name("name")
            value = static_value(name.named_children[0]) if name is not None and name.named_children else None
            return program_name(value) if value else ""
        stack.extend(c for c in current.named_children if c.type in STATEMENTS)
    return ""
