"""Command analysis: every simple command in a bash command line, and what in it needs a person.

The command is parsed with tree-sitter-bash and walked: lists, pipelines, subshells, compound commands,
functions, redirections, heredocs and herestrings, `$(...)`/`<(...)` anywhere (assignments, redirect targets,
heredoc bodies), and the scripts commands run (`bash -c`, `eval`, `find -exec`, `trap`, `alias`, `git rebase
-x`). `cd` is followed, linearly: a `cd` that may fail (its folder does not exist yet) leaves the folder
unknown for what follows unless `&&` guards it.

Fail closed: a syntax error, a construct not modelled here, a command name or wrapped command from an
expansion, nesting past MAX_DEPTH, more than MAX_PARTS statements and words, input past MAX_COMMAND_CHARS or analysis
past TIME_BUDGET_S all give an "unchecked" danger, which needs a person like a destructive one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

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
from tools.approval.paths import write_target_problem
from tools.approval.wrappers import ASSIGNMENT, program_name, unwrap

MAX_COMMAND_CHARS = 200_000
MAX_DEPTH = 40  # nested scripts, substitutions and compound commands
MAX_PARTS = 50_000  # statements and words read, nested scripts included
TIME_BUDGET_S = 5.0  # the check runs before the command's own timeout starts: it must end on its own

JOINED_LINES = re.compile(r"[^\s\\]\\\n[^\s]")
FORK_BOMB = re.compile(r"(?<![\w:.-])([\w:.-]{1,40})\s*\(\s*\)\s*\{[^}]{0,200}?\1\s*\|\s*\1")


@dataclass
class Analysis:
    commands: list[list[str]]  # every simple command's words (nested ones too), as written where not static
    dangers: list[Danger]


class _Stop(Exception):
    """The analysis ran out of its bounds: what is left is unknown."""


def analyse_command(command: str, workspace: Path) -> Analysis:
    """Every simple command in `command`, and whatever in it would be destructive or cannot be checked."""
    workspace = Path(workspace).resolve()
    analysis = Analysis(commands=[], dangers=[])
    if len(command) > MAX_COMMAND_CHARS:
        analysis.dangers.append(
            Danger(command=command[:200], kind="unchecked", reason=f"is too long to check ({len(command)} characters)")
        )
        return analysis
    try:
        command.encode("utf-8")
    except UnicodeError:
        analysis.dangers.append(
            Danger(command=command[:200], kind="unchecked", reason="holds characters that are not valid text")
        )
        return analysis
    walker = _Walker(workspace, analysis, time.monotonic() + TIME_BUDGET_S)
    try:
        walker.script(command, State(workspace), depth=0)
    except (_Stop, RecursionError) as stop:
        reason = str(stop) or "is nested too deeply to check"
        analysis.dangers.append(Danger(command=command[:200], kind="unchecked", reason=reason))
    if "(" in command and FORK_BOMB.search(command[:20_000]):
        analysis.dangers.append(Danger(command=command, reason="is a fork bomb"))
    return analysis


@dataclass
class _Walker:
    workspace: Path
    out: Analysis
    deadline: float
    count: int = 0

    def danger(self, node: Node | str, reason: str, kind: Kind = "destructive") -> None:
        self.out.dangers.append(
            Danger(command=text(node) if isinstance(node, Node) else node, reason=reason, kind=kind)
        )

    def tick(self, parts: int = 1) -> None:
        """Counts what was read (statements, words); stops past MAX_PARTS or the time budget."""
        self.count += parts
        if self.count > MAX_PARTS:
            raise _Stop(f"has more than {MAX_PARTS} parts, too many to check")
        if time.monotonic() > self.deadline:
            raise _Stop(f"takes longer than {TIME_BUDGET_S:g}s to check")

    # ------------------------------------------------------------ scripts and statements

    def script(self, source: str, state: State, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.danger(source[:200], "is nested too deeply to check", "unchecked")
            return
        if JOINED_LINES.search(source):  # bash joins `r\<newline>m` into `rm`; tree-sitter splits it in two
            self.danger(
                source[:200], "joins a word across lines with a backslash, which this check does not model", "unchecked"
            )
        root = parse(source.encode("utf-8", "surrogatepass"))
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
            raise _Stop("is nested too deeply to check")
        kind = node.type
        if kind == "command":
            return self.command(node, state, depth, stdin)
        if kind == "list":
            return self.chain(node, state, depth)
        if kind == "pipeline":
            self.pipeline([c for c in node.children if c.is_named], state, depth, "inherited")
            return state
        if kind == "redirected_statement":
            return self.redirected(node, state, depth, stdin)
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

    def redirected(self, node: Node, state: State, depth: int, stdin: Arg | str) -> State:
        body = node.child_by_field_name("body")
        continuations: list[tuple[str, Node]] = []
        for child in node.named_children:
            if child.type in REDIRECTS:
                stdin = self.redirect(child, state, depth, stdin, continuations)
        after = state
        if body is not None:
            after = self.statement(body, state, depth + 1, stdin)
        for op, continuation in continuations:
            if (
                continuation.type == "pipeline"
                and continuation.children
                and continuation.children[0].type in ("|", "|&")
            ):
                self.pipeline(continuation.children, after, depth + 1, "pipe")
            elif op in ("|", "|&"):
                self.statement(continuation, after, depth + 1, "pipe")
            else:
                after = self.statement(continuation, after if op == "&&" else settle(after), depth + 1)
        return after

    def redirect(
        self, node: Node, state: State, depth: int, stdin: Arg | str, continuations: list[tuple[str, Node]]
    ) -> Arg | str:
        """Checks where a redirection writes; returns what standard input becomes."""
        kind = node.type
        if kind == "file_redirect":
            self.expression(node, state, depth)
            op = next((c.type for c in node.children if not c.is_named), "")
            destination = node.child_by_field_name("destination") or (
                node.named_children[-1] if node.named_children else None
            )
            if destination is None:
                return stdin
            if ">" in op and not (op in (">&", "<&") and re.fullmatch(r"\d+-?|-", text(destination))):
                for target in word_values(destination):
                    if isinstance(target, Unknown):
                        self.danger(
                            node,
                            f"writes to a file named by an expansion (`{target.text}`) that cannot be checked here",
                            "unchecked",
                        )
                    elif problem := write_target_problem(target, state.cwd, self.workspace):
                        self.danger(node, problem)
            return "file" if op == "<" else stdin
        if kind == "herestring_redirect":
            self.expression(node, state, depth)
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
                content = self.heredoc(child, node, quoted, state, depth)
            elif child.type in REDIRECTS:
                self.redirect(child, state, depth, stdin, continuations)
            elif child.is_named and child.type != "heredoc_end":
                continuations.append((op, child))
            elif not child.is_named:
                op = child.type
        return content

    def heredoc(self, body: Node, redirect: Node, quoted: bool, state: State, depth: int) -> Arg:
        raw = text(body)
        if any(c.type == "<<-" for c in redirect.children):
            raw = "\n".join(line.lstrip("\t") for line in raw.split("\n"))
        if quoted:
            return raw
        self.expression(body, state, depth)  # `$(...)` in an unquoted heredoc runs
        if any(c.is_named and c.type != "heredoc_content" for c in body.children):
            return Unknown(raw[:80])
        return re.sub(r"\\([$`\\])", r"\1", raw.replace("\\\n", ""))

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
                stdin = self.redirect(child, state, depth, stdin, continuations)
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
        self.out.commands.append(prefix + [w if isinstance(w, str) else w.text for w in words])
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
