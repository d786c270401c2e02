"""Which tool calls may run: the approval policy, applied to every call in `Toolbox.run`.

Modes:
- `auto` (the default, for headless runs): everything runs except what a deny rule names and destructive
  commands, which are refused.
- `ask`: commands, file writes and edits and MCP tools are shown to a person (the exact command, or the
  diff) and run only after a yes; allow rules skip the question, deny rules and "no terminal" refuse.
- `never-ask`: nobody is asked; a call runs only when an allow rule (or the read-only built-ins) covers it.

Rules are strings in the `allow` and `deny` lists; deny wins over allow:
- `mcp:SERVER`: every tool of that MCP server (`mcp:release`); the same as the tool-name glob `release__*`.
- `tool:NAME`: a tool by name, `*`/`?` globs allowed (`tool:write_file`, `tool:release__*`).
- `cmd:PREFIX`: bash commands whose words start with these words (`cmd:python -m pytest`, `cmd:npm run *`).
- a bare rule: several words are a command prefix (`git status`); one word names a tool and also a
  command's first word (`write_file`, `release__*`, `pytest`).
A compound command (`a && b | c; $(d)`) is allowed by rules only when every simple command in it is;
it is denied when any one of them is.

Destructive commands are never run without a person: refused in `auto` and `never-ask`, asked in `ask`,
whatever the allow rules say. The check parses the command (`;`, `&&`, `||`, `|`, subshells, `$(...)`,
`bash -c`, `eval`, `sudo`, `cd`) and errs on the side of asking. It is a guard against the usual
accidents, not a sandbox.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from tools.base import Tool

Mode = Literal["auto", "ask", "never-ask"]

# Built-in tools that change nothing (paths confined to the workspace): never asked about, allowed in never-ask.
READ_ONLY_TOOLS = {"read_file", "list_files", "search", "finish", "activate_skill"}

MAX_PREVIEW_LINES = 200
MAX_DEPTH = 8  # nested $(...), bash -c, eval: deeper than this is not read, and needs approval


class Danger(BaseModel):
    command: str  # the simple command that is dangerous, as written
    reason: str  # what it would do


class Verdict(BaseModel):
    """What the policy says before anyone is asked."""

    action: Literal["allow", "ask", "refuse"]
    why: Literal["deny-rule", "destructive", "allow-rule", "read-only", "auto", "unlisted"]
    reason: str
    subject: str  # what the call is, for messages: the command, or the tool and its path


class ApprovalRequest(BaseModel):
    """What a person is shown in `ask` mode."""

    tool: str
    subject: str
    reason: str  # why a question is needed
    preview: str  # the exact command, or the diff a write/edit would make
    destructive: bool = False


class Decision(BaseModel):
    allowed: bool
    reason: str


# The injected question: True = yes, False = no, None = nobody could be asked (no terminal).
Ask = Callable[[ApprovalRequest], "bool | None"]


class ApprovalPolicy(BaseModel):
    mode: Mode = "auto"
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    def evaluate(self, tool: str, arguments: dict[str, Any], workspace: Path, server: str | None = None) -> Verdict:
        command = arguments.get("command") if tool == "bash" else None
        subject = _subject(tool, arguments)
        commands: list[list[str]] = []
        dangers: list[Danger] = []
        if isinstance(command, str):
            analysis = analyse_command(command, workspace)
            commands, dangers = analysis.commands, analysis.dangers
        for rule in self.deny:
            if _tool_rule_matches(rule, tool, server) or any(_command_rule_matches(rule, w, deny=True) for w in commands):
                return Verdict(action="refuse", why="deny-rule", subject=subject, reason=f"matches the deny rule `{rule}`")
        if dangers:
            return Verdict(action="ask" if self.mode == "ask" else "refuse", why="destructive",
                           subject=dangers[0].command, reason=dangers[0].reason)
        if any(_tool_rule_matches(rule, tool, server) for rule in self.allow) or (
            commands and all(any(_command_rule_matches(rule, w) for rule in self.allow) for w in commands)
        ):
            return Verdict(action="allow", why="allow-rule", subject=subject, reason="allowed by a rule")
        if tool in READ_ONLY_TOOLS and server is None:
            return Verdict(action="allow", why="read-only", subject=subject, reason="read-only tool")
        if self.mode == "auto":
            return Verdict(action="allow", why="auto", subject=subject, reason="auto mode")
        if self.mode == "ask":
            return Verdict(action="ask", why="unlisted", subject=subject, reason="no allow rule covers it")
        uncovered = next((w for w in commands if not any(_command_rule_matches(r, w) for r in self.allow)), None)
        part = f" (no rule covers `{_clip(shlex.join(uncovered), 80)}`)" if uncovered and len(commands) > 1 else ""
        return Verdict(action="refuse", why="unlisted", subject=subject,
                       reason=f"is not allowed by any allow rule{part} (approval mode never-ask)")


ADVICE = {
    "deny-rule": "Do the task another way, or ask the user to do this.",
    "destructive": "Commands like this never run without a person's approval: ask the user to do it, or do the task another way.",
    "unlisted": "Do the task another way, or ask the user to add an allow rule for it (`allow` in .agent/config.toml).",
}


@dataclass
class Approver:
    """The policy plus the way to ask a person; `Toolbox.run` consults it before every call."""

    policy: ApprovalPolicy
    ask: Ask | None = None

    def review(self, tool: "Tool", arguments: dict[str, Any], workspace: Path) -> Decision:
        """Never raises (but lets Ctrl-C at the prompt through): a check that fails refuses."""
        try:
            return self._review(tool, arguments, Path(workspace).resolve())
        except Exception as exc:  # noqa: BLE001 - fail closed, and tell the model why
            return Decision(allowed=False, reason=f"refused by the approval policy: the check failed ({type(exc).__name__}: {exc})")

    def _review(self, tool: "Tool", arguments: dict[str, Any], workspace: Path) -> Decision:
        server = getattr(tool, "server", None)
        verdict = self.policy.evaluate(tool.name, arguments, workspace, server if isinstance(server, str) else None)
        if verdict.action == "allow":
            return Decision(allowed=True, reason=verdict.reason)
        subject = _clip(verdict.subject)
        if verdict.action == "refuse":
            return Decision(allowed=False, reason=f"refused by the approval policy: `{subject}` {verdict.reason}. {ADVICE[verdict.why]}")
        request = ApprovalRequest(tool=tool.name, subject=verdict.subject, reason=verdict.reason,
                                  preview=preview(tool.name, arguments, workspace), destructive=verdict.why == "destructive")
        answer = self.ask(request) if self.ask else None
        if answer is None:
            return Decision(allowed=False, reason=(
                f"refused by the approval policy: `{subject}` needs a person's approval ({verdict.reason}), but there is "
                "no terminal to ask on (the user can run with --approval auto or add an allow rule). Do the task another way."))
        if answer:
            return Decision(allowed=True, reason="approved by the user")
        return Decision(allowed=False, reason=f"refused: the user declined `{subject}`. Do not retry it; do the task another way or ask the user.")


def _subject(tool: str, arguments: dict[str, Any]) -> str:
    if tool == "bash" and isinstance(arguments.get("command"), str):
        return arguments["command"]
    path = arguments.get("path")
    return f"{tool} {path}" if isinstance(path, str) else tool


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.replace("`", "'").replace("\x00", "\\0").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- rules


def _split_rule(rule: str) -> tuple[str, str]:
    for kind in ("mcp", "tool", "cmd"):
        if rule.startswith(kind + ":"):
            return kind, rule[len(kind) + 1 :].strip()
    return "bare", rule.strip()


def _tool_rule_matches(rule: str, tool: str, server: str | None) -> bool:
    kind, pattern = _split_rule(rule)
    if not pattern:
        return False
    if kind == "mcp":
        return (server is not None and fnmatch.fnmatchcase(server, pattern)) or fnmatch.fnmatchcase(tool, f"{pattern}__*")
    if kind == "tool" or (kind == "bare" and len(pattern.split()) == 1):
        return fnmatch.fnmatchcase(tool, pattern)
    return False


def _command_rule_matches(rule: str, words: list[str], deny: bool = False) -> bool:
    kind, pattern = _split_rule(rule)
    if kind in ("mcp", "tool") or not pattern:
        return False
    prefix = _split_words(pattern)
    candidates = [words, _unwrap(words)] if deny else [words]
    return any(
        len(c) >= len(prefix) and all(fnmatch.fnmatchcase(w, p) for w, p in zip(c, prefix)) for c in candidates
    )


# ---------------------------------------------------------------- command analysis


@dataclass
class Segment:
    text: str  # one simple command as written
    op: str  # the operator before it: "", ";", "&&", "||", "|", "|&", "&"
    nested: list[tuple[str, str]]  # ("subst" | "heredoc", body): $(...), `...`, <(...), heredoc bodies


@dataclass
class Analysis:
    commands: list[list[str]]  # every simple command's words (nested ones too), redirections removed
    dangers: list[Danger]


MAX_COMMAND_CHARS = 200_000
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "csh", "tcsh", "fish", "su", "source", "."}
INTERPRETERS = SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}
DISK_TOOLS = {"mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
SAFE_DEVICES = {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom"}
KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time", "case", "esac"}
DELETERS = {"rm", "shred", "unlink", "rmdir", "mv", "chmod", "chown", "chgrp", "truncate"}
FORK_BOMB = re.compile(r"(?<![\w:.-])([\w:.-]{1,40})\s*\(\s*\)\s*\{[^}]{0,200}?\1\s*\|\s*\1")


def analyse_command(command: str, workspace: Path) -> Analysis:
    """Every simple command in `command`, and whatever in it would be destructive."""
    workspace = Path(workspace).resolve()
    analysis = Analysis(commands=[], dangers=[])
    if len(command) > MAX_COMMAND_CHARS:
        analysis.dangers.append(Danger(command=command[:200], reason=f"is too long to check ({len(command)} characters)"))
        return analysis
    _analyse(command, workspace, workspace, analysis, depth=0)
    if re.search(r"\(\s*\)\s*\{", command) and FORK_BOMB.search(command):
        analysis.dangers.append(Danger(command=command, reason="is a fork bomb"))
    return analysis


def _analyse(command: str, workspace: Path, cwd: Path | None, out: Analysis, depth: int) -> None:
    if depth > MAX_DEPTH:
        out.dangers.append(Danger(command=command, reason="is nested too deeply to check"))
        return
    segments = split_command(command)
    parsed = []
    for segment in segments:
        words, writes = _words_and_redirects(segment.text)
        program_words, wrappers = _unwrap_with(words)
        parsed.append((segment, words, writes, program_words, wrappers, _program(program_words)))
    # does a shell read this segment's output (`cat <<EOF | sh`)?
    feeds_shell = [False] * len(parsed)
    later_shell = False
    for index in range(len(parsed) - 1, -1, -1):
        segment, program = parsed[index][0], parsed[index][5]
        later_shell = later_shell or program in SHELLS
        feeds_shell[index] = later_shell
        if segment.op not in ("|", "|&"):
            later_shell = False
    pipeline_has_download = False
    for index, (segment, words, writes, program_words, wrappers, program) in enumerate(parsed):
        text = segment.text.strip() or command.strip()
        if segment.op not in ("|", "|&"):
            pipeline_has_download = False
        nested_programs: set[str] = set()
        for kind, body in segment.nested:
            executed = kind == "subst" or program in SHELLS or feeds_shell[index]
            if not executed:
                continue  # a heredoc feeding a file or a non-shell program is data
            inner = Analysis(commands=[], dangers=[])
            _analyse(body, workspace, cwd, inner, depth + 1)
            out.commands += inner.commands
            out.dangers += inner.dangers
            nested_programs |= {_program(_unwrap_with(w)[0]) for w in inner.commands}
        if words:
            out.commands.append(words)
        piped = segment.op in ("|", "|&") and pipeline_has_download and _reads_code_from_stdin(program, program_words[1:])
        if program in INTERPRETERS and (piped or nested_programs & DOWNLOADERS):
            out.dangers.append(Danger(command=text, reason="runs a script downloaded from the network"))
        if program in DOWNLOADERS:
            pipeline_has_download = True
        for target in writes:
            problem = _write_target_problem(target, cwd, workspace)
            if problem:
                out.dangers.append(Danger(command=text, reason=problem))
        for reason in _command_dangers(program, program_words, wrappers, workspace, cwd, out, depth):
            out.dangers.append(Danger(command=text, reason=reason))
        if program in ("cd", "pushd"):
            cwd = _change_dir(program_words[1:], cwd)


def _reads_code_from_stdin(program: str, args: list[str]) -> bool:
    """`curl ... | bash` runs what it downloads; `curl ... | python -m json.tool` only reads it as data."""
    options, operands = _options_and_operands(args)
    if program in SHELLS:
        return "-s" in options or not (operands or any("c" in o[1:] for o in options if not o.startswith("--")))
    if any(o.startswith(("-c", "-m", "-e", "-E")) for o in options):
        return False
    return not operands or operands[0] == "-"


def _change_dir(args: list[str], cwd: Path | None) -> Path | None:
    args = [a for a in args if not a.startswith("-") or a == "-"]
    if not args:
        return Path(os.path.realpath(Path.home()))
    return None if args[0] == "-" else _normal(args[0], cwd)


def _recursive(options: list[str], letters: str) -> bool:
    return any(o == "--recursive" or (not o.startswith("--") and any(c in o[1:] for c in letters)) for o in options)


def _command_dangers(program: str, words: list[str], wrappers: set[str], workspace: Path, cwd: Path | None,
                     out: Analysis, depth: int) -> Iterable[str]:
    args = words[1:]
    options, operands = _options_and_operands(args)
    if "xargs" in wrappers and program in DELETERS and _recursive(options, "rR"):
        yield "works recursively on paths read from its input, which cannot be checked"
    if program == "rm":
        recursive = _recursive(options, "rR")
        for target in operands:
            if recursive:
                problem = _delete_target_problem(target, cwd, workspace)
                if problem:
                    yield f"deletes recursively: {problem}"
            else:
                problem = _git_internal(target, cwd, workspace)
                if problem:
                    yield problem
    elif program == "find":
        yield from _find_dangers(args, workspace, cwd, out, depth)
    elif program == "git":
        yield from _git_dangers(args)
    elif program.startswith("mkfs") or program in DISK_TOOLS:
        yield "formats or repartitions a disk"
    elif program == "dd":
        for arg in args:
            problem = _write_target_problem(arg[3:], cwd, workspace) if arg.startswith("of=") else None
            if problem:
                yield problem
    elif program in ("chmod", "chown", "chgrp"):
        no_mode = any(o.startswith("--reference") for o in options) or (program == "chmod" and _is_mode_option(options))
        recursive = _recursive(options, "R")
        for target in operands if no_mode else operands[1:]:
            problem = _delete_target_problem(target, cwd, workspace) if recursive else None
            if problem:
                yield f"changes owners or permissions recursively: {problem}"
            elif _normal(target, cwd) == Path("/"):
                yield "changes owners or permissions of the filesystem root"
            elif problem := _git_internal(target, cwd, workspace):
                yield problem
    elif program in POWER or (program == "init" and args[:1] in (["0"], ["6"])):
        yield "shuts down or reboots the machine"
    elif program in ("kill", "pkill") and args and args[-1] == "-1":
        yield "kills every process you own"
    elif program in ("mv", "unlink", "shred", "truncate", "touch", "rmdir", "mkdir"):
        problem = next(filter(None, (_git_internal(t, cwd, workspace) for t in operands)), None)
        if problem:
            yield problem
        elif program == "mv":
            for source in operands[:-1]:
                problem = _delete_target_problem(source, cwd, workspace, allow_git=True)
                if problem:
                    yield f"moves away {problem}"
                    break
    elif program in ("cp", "ln", "install", "rsync", "tee"):
        for target in operands if program == "tee" else operands[-1:]:
            problem = _git_internal(target, cwd, workspace)
            if problem:
                yield problem
    elif program in ("sed", "perl") and any(a.startswith(("-i", "--in-place")) for a in args):
        problem = next(filter(None, (_git_internal(t, cwd, workspace) for t in args)), None)
        if problem:
            yield problem
    elif program in SHELLS:
        script = _shell_c_argument(args)
        if script is not None:
            _nested(script, workspace, cwd, out, depth)
    elif program == "eval":
        _nested(" ".join(args), workspace, cwd, out, depth)
    elif program == "env":
        split = next((i for i, a in enumerate(args) if a in ("-S", "--split-string")), None)
        if split is not None and split + 1 < len(args):
            _nested(args[split + 1], workspace, cwd, out, depth)


def _nested(script: str, workspace: Path, cwd: Path | None, out: Analysis, depth: int) -> None:
    inner = Analysis(commands=[], dangers=[])
    _analyse(script, workspace, cwd, inner, depth + 1)
    out.commands += inner.commands
    out.dangers += inner.dangers


def _is_mode_option(options: list[str]) -> bool:
    """`chmod -w FILE`: the mode itself looks like an option."""
    return any(re.fullmatch(r"-[rwxXst]+", o) for o in options)


def _shell_c_argument(args: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (also `-lc`, `-ec`), or None for a script file or stdin."""
    for index, arg in enumerate(args):
        if arg == "--" or not arg.startswith("-"):
            return None  # a script file (or a user name for su): not ours to read
        if not arg.startswith("--") and "c" in arg[1:]:
            rest = [a for a in args[index + 1 :] if not a.startswith("-")]
            return rest[0] if rest else None
    return None


def _find_dangers(args: list[str], workspace: Path, cwd: Path | None, out: Analysis, depth: int) -> Iterable[str]:
    index = 0
    while index < len(args) and args[index] in ("-H", "-L", "-P"):
        index += 1
    starts: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        starts.append(args[index])
        index += 1
    expression = args[index:]
    deletes = "-delete" in expression
    for position, word in enumerate(expression):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i in range(position + 1, len(expression)) if expression[i] in (";", "+")), len(expression))
            executed = expression[position + 1 : end]
            deletes = deletes or _program(_unwrap_with(executed)[0]) in DELETERS
            if executed:
                _nested(shlex.join(executed), workspace, cwd, out, depth)
    if deletes:
        for start in starts or ["."]:
            problem = _delete_target_problem(start, cwd, workspace, allow_root=True)
            if problem:
                yield f"deletes files found under {problem}"


def _git_dangers(args: list[str]) -> Iterable[str]:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "-c") else 1
    if index >= len(args):
        return
    sub, rest = args[index], args[index + 1 :]
    if sub == "push":
        for arg in rest:
            if arg in ("--force", "--force-with-lease", "--force-if-includes") or arg.startswith("--force-with-lease="):
                yield f"rewrites remote history (`{arg}`)"
            elif arg == "--mirror":
                yield "overwrites and deletes remote branches (`--mirror`)"
            elif arg in ("--delete", "--prune"):
                yield f"deletes remote branches (`{arg}`)"
            elif re.fullmatch(r"-[a-zA-Z]+", arg) and ("f" in arg or "d" in arg):
                yield f"{'rewrites remote history' if 'f' in arg else 'deletes remote branches'} (`{arg}`)"
            elif arg.startswith("+") and len(arg) > 1:
                yield f"force-pushes, rewriting remote history (refspec `{arg}`)"
            elif arg.startswith(":") and len(arg) > 1:
                yield f"deletes a remote branch (refspec `{arg}`)"
            else:
                continue
            return
    elif sub == "reset" and "--hard" in rest:
        yield "discards uncommitted changes (`--hard`)"


def _options_and_operands(args: list[str]) -> tuple[list[str], list[str]]:
    options, operands, ended = [], [], False
    for arg in args:
        if not ended and arg == "--":
            ended = True
        elif not ended and arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            operands.append(arg)
    return options, operands


# ---------------------------------------------------------------- paths


def _normal(raw: str, cwd: Path | None) -> Path | None:
    """Where a path argument points (symlinks followed), or None when it cannot be known here."""
    if not raw or "$" in raw or "`" in raw or "\x00" in raw:
        return None
    try:
        expanded = os.path.expanduser(raw)
        if expanded.startswith("~"):
            return None
        if os.path.isabs(expanded):
            return Path(os.path.realpath(expanded))
        return Path(os.path.realpath(os.path.join(cwd, expanded))) if cwd is not None else None
    except (UnicodeError, ValueError, OSError):  # lone surrogates and the like: not a path the OS could use
        return None


GLOB = re.compile(r"[*?\[]")


def _delete_target_problem(raw: str, cwd: Path | None, workspace: Path, *, allow_root: bool = False,
                           allow_git: bool = False) -> str | None:
    """Why deleting `raw` recursively needs a person, or None for a path strictly inside the workspace
    (`allow_root`: the workspace itself is fine too, for `find . -name x -delete`)."""
    if not raw or raw == "{}":
        return None
    if "$" in raw or "`" in raw or "\x00" in raw:
        return f"`{raw}` is built from a variable or command and may expand outside the workspace"
    parts = raw.split("/")
    globbed = next((i for i, p in enumerate(parts) if GLOB.search(p)), None)
    base_raw = raw if globbed is None else "/".join(parts[:globbed]) or ("/" if raw.startswith("/") else ".")
    base = _normal(base_raw, cwd)
    if base is None:
        return f"`{raw}` cannot be resolved here (a variable, an unknown user, or a folder after an unknown cd)"
    home = Path(os.path.realpath(Path.home()))
    if base == Path("/"):
        what = "the root of the filesystem"
    elif base == home:
        what = "your home folder"
    elif base != workspace and base in workspace.parents:
        what = f"a folder that contains the workspace ({base})"
    elif base != workspace and workspace not in base.parents:
        what = f"outside the workspace ({base})"
    elif base == workspace and not allow_root and (globbed is None or _broad(parts[globbed])):
        what = "the whole workspace"
    else:
        what = None
    if what:
        return f"`{raw}` is {what}"
    if not allow_git:
        later = parts[globbed:] if globbed is not None else []
        matches_git = any(p == ".git" or (p.startswith(".") and fnmatch.fnmatchcase(".git", p)) for p in later)
        if ".git" in base.relative_to(workspace).parts or matches_git:  # (`*` skips dot files in bash)
            return f"`{raw}` is (or holds) the repository's .git internals"
    return None


def _broad(part: str) -> bool:
    return part.strip("*?") == "" or part in (".*", "*.*", ".[!.]*", "..?*")


def _git_internal(raw: str, cwd: Path | None, workspace: Path) -> str | None:
    if not raw or "\x00" in raw:
        return None
    if ".git" not in raw.split("/"):
        resolved = _normal(raw, cwd)  # a symlink may still lead into .git
        git = os.path.join(workspace, ".git")
        if resolved is None or not (str(resolved) == git or str(resolved).startswith(git + os.sep)):
            return None
    return f"writes into .git internals (`{raw}`); use git commands to change the repository"


def _write_target_problem(raw: str, cwd: Path | None, workspace: Path) -> str | None:
    if raw.startswith("/dev/"):
        if raw in SAFE_DEVICES or raw.startswith(("/dev/fd/", "/dev/pts/")):
            return None
        return f"writes raw data to the device {raw}"
    return _git_internal(raw, cwd, workspace)


# ---------------------------------------------------------------- splitting


SEPARATORS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n", "(", ")")
SPECIAL_CHARS = frozenset("'\"\\$`<>#&|;\n()")
HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z0-9_.-]+)\1")


def split_command(command: str) -> list[Segment]:
    """Split a bash command line into simple commands closely enough to be conservative: quotes and escapes
    respected, comments dropped, and `$(...)`, backticks, `<(...)` and heredoc bodies kept as nested
    commands to be checked too."""
    segments: list[Segment] = []
    buf: list[str] = []
    nested: list[tuple[str, str]] = []
    heredocs: list[tuple[str, int]] = []  # (marker, index of the segment that reads it)
    op = ""
    i, n = 0, len(command)
    quote: str | None = None

    def flush(next_op: str) -> None:
        nonlocal buf, nested, op
        text = "".join(buf)
        if text.strip() or nested:
            segments.append(Segment(text=text, op=op, nested=nested))
        buf, nested, op = [], [], next_op

    while i < n:
        ch = command[i]
        if ch not in SPECIAL_CHARS:  # the common case, kept fast
            buf.append(ch)
            i += 1
        elif quote == "'":
            buf.append(ch)
            quote = None if ch == "'" else quote
            i += 1
        elif ch == "\\" and i + 1 < n:
            buf.append(command[i : i + 2])
            i += 2
        elif command.startswith("$(", i) or (quote is None and command.startswith(("<(", ">("), i)):
            end = _matching_paren(command, i + 2)
            nested.append(("subst", command[i + 2 : end]))
            buf.append("$SUBST")
            i = end + 1
        elif ch == "`":
            end = i + 1
            while end < n and command[end] != "`":
                end += 2 if command[end] == "\\" else 1
            nested.append(("subst", command[i + 1 : min(end, n)]))
            buf.append("$SUBST")
            i = end + 1
        elif quote == '"':
            buf.append(ch)
            quote = None if ch == '"' else quote
            i += 1
        elif ch in ("'", '"'):
            quote = ch
            buf.append(ch)
            i += 1
        elif ch == "#" and (not buf or buf[-1][-1:].isspace()):
            end = command.find("\n", i)
            i = n if end == -1 else end
        elif command.startswith("<<", i) and not command.startswith("<<<", i) and (match := HEREDOC.match(command, i)):
            heredocs.append((match.group(2), len(segments)))
            buf.append(" ")
            i = match.end()
        elif ch == "\n" and heredocs:
            flush(";")
            i += 1
            for marker, owner in heredocs:
                body: list[str] = []
                while i < n:
                    end = command.find("\n", i)
                    end = n if end == -1 else end
                    line, i = command[i:end], end + 1
                    if line.strip() == marker:
                        break
                    body.append(line)
                if owner < len(segments):
                    segments[owner].nested.append(("heredoc", "\n".join(body)))
                else:
                    segments.append(Segment(text="", op=";", nested=[("heredoc", "\n".join(body))]))
            heredocs = []
        else:
            sep = next((s for s in SEPARATORS if command.startswith(s, i)), None)
            if sep == "&" and (command.startswith("&>", i) or (buf and buf[-1][-1:] in ("<", ">"))):
                sep = None
            if sep == "|" and buf and buf[-1][-1:] == ">":
                sep = None
            if sep is None:
                buf.append(ch)
                i += 1
            else:
                flush(";" if sep in ("\n", ")", "(", ";;") else sep)
                i += len(sep)
    flush("")
    return segments


def _matching_paren(text: str, start: int) -> int:
    """Index of the `)` that closes the `(` just before `start` (quotes and nesting respected), or len(text)."""
    stack, i, n = ["("], start, len(text)
    while i < n:
        ch, top = text[i], stack[-1]
        if ch == "\\":
            i += 2
            continue
        if top == '"':
            if ch == '"':
                stack.pop()
            elif text.startswith("$(", i):
                stack.append("(")
                i += 1
        elif ch == "'":
            end = text.find("'", i + 1)
            i = n if end == -1 else end
        elif ch == '"':
            stack.append('"')
        elif ch == "(":
            stack.append("(")
        elif ch == ")":
            stack.pop()
            if not stack:
                return i
        i += 1
    return n


def _split_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


REDIRECT = re.compile(r"([0-9]*)(&>>|&>|>>|>\||>&|>|<>|<&|<<<|<<|<)(.*)", re.S)


def _lex(text: str) -> list[str]:
    for suffix in ("", "'", '"', "\"'", "'\""):
        lexer = shlex.shlex(text + suffix, posix=True, punctuation_chars="<>&|;()")
        lexer.whitespace_split, lexer.commenters = True, ""
        try:
            return list(lexer)
        except ValueError:
            continue
    return text.split()


def _words_and_redirects(text: str) -> tuple[list[str], list[str]]:
    """The words of one simple command, and the files its redirections write to."""
    tokens = _lex(text)
    words: list[str] = []
    writes: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token and set(token) <= set("<>&|;()"):
            match = REDIRECT.fullmatch(token)
            if match:
                if words and words[-1].isdigit():
                    words.pop()  # the file descriptor of `2>&1`
                target = tokens[index + 1] if index + 1 < len(tokens) else ""
                if ">" in match.group(2) and not re.fullmatch(r"[0-9]+-?|-", target):
                    writes.append(target)
                index += 2
            else:
                index += 1
            continue
        words.append(token)
        index += 1
    while words and words[0] in KEYWORDS:
        words = words[1:]
    while words and words[-1] in ("}", "fi", "done", "esac"):
        words = words[:-1]
    return words, writes


WRAPPERS = {  # programs that run another command, and their options that take a value
    "sudo": {"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D"},
    "doas": {"-u", "-C"},
    "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"},
    "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--delimiter", "--max-args", "--max-procs", "--arg-file"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "nohup": set(),
    "time": set(),
    "watch": {"-n", "-d"},
    "chronic": set(),
    "setsid": set(),
    "busybox": set(),
    "unbuffer": set(),
}


def _unwrap_with(words: list[str]) -> tuple[list[str], set[str]]:
    """The command that actually runs, without `VAR=value`, `sudo`, `env`, `nice`, `timeout`, `xargs`...;
    and the wrappers that were around it."""
    wrappers: set[str] = set()
    for _ in range(32):
        while words and (re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[0] in KEYWORDS):
            words = words[1:]
        name = os.path.basename(words[0]) if words else ""
        if name not in WRAPPERS:
            return words, wrappers
        wrappers.add(name)
        index = 1
        while index < len(words) and (words[index].startswith("-") or (name == "env" and "=" in words[index])):
            if words[index] == "--":
                index += 1
                break
            if name == "env" and words[index] in ("-S", "--split-string"):
                return words, wrappers  # env -S STRING: read as a nested command
            index += 2 if words[index] in WRAPPERS[name] else 1
        if name == "timeout":
            index += 1  # the duration
        words = words[index:]
    return words, wrappers


def _unwrap(words: list[str]) -> list[str]:
    return _unwrap_with(words)[0]


def _program(words: list[str]) -> str:
    return os.path.basename(words[0]) if words else ""


# ---------------------------------------------------------------- what a person is shown


def preview(tool: str, arguments: dict[str, Any], workspace: Path) -> str:
    """The exact command, or the diff a write or edit would make."""
    if tool == "bash" and isinstance(arguments.get("command"), str):
        return arguments["command"]
    path = arguments.get("path")
    if tool in ("write_file", "edit_file") and isinstance(path, str):
        current = _current_text(workspace, path)
        if tool == "write_file":
            new = arguments.get("content") if isinstance(arguments.get("content"), str) else ""
        else:
            old, replacement = arguments.get("old"), arguments.get("new")
            if not (isinstance(old, str) and isinstance(replacement, str)) or current is None or current.count(old) != 1:
                return f"edit {path}: replace\n{old}\nwith\n{replacement}"
            new = current.replace(old, replacement, 1)
        diff = difflib.unified_diff((current or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                    fromfile=f"a/{path}" if current is not None else "/dev/null", tofile=f"b/{path}")
        lines = [line if line.endswith("\n") else line + "\n" for line in diff]
        if len(lines) > MAX_PREVIEW_LINES:
            lines = lines[:MAX_PREVIEW_LINES] + [f"[... {len(lines) - MAX_PREVIEW_LINES} more diff lines]\n"]
        return "".join(lines).rstrip("\n") or f"(no change to {path})"
    try:
        return f"{tool} {json.dumps(arguments, ensure_ascii=False, default=str)[:4000]}"
    except (TypeError, ValueError):
        return f"{tool} {arguments!r}"[:4000]


def _current_text(workspace: Path, path: str) -> str | None:
    from tools.base import ToolError
    from tools.files import read_text
    from tools.workspace import resolve_inside

    try:
        resolved = resolve_inside(workspace, path)
        return read_text(resolved, path) if resolved.is_file() else None
    except (ToolError, OSError, ValueError):
        return None
