"""What a git command would do that needs a person: history rewritten or lost, uncommitted work discarded,
and git configuration that makes git run a program (which keys do: git_config.py)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from pathlib import Path

from tools.approval.bash_syntax import Arg, Unknown
from tools.approval.git_config import Kind, config_dangers, exec_key, runs_program
from tools.approval.options import long_option, options_and_operands, short_cluster
from tools.approval.paths import delete_target_problem, normal

# subcommands whose arguments may come from expansions: none of their options runs a program or loses work
ARGS_MAY_VARY = {
    "add",
    "commit",
    "status",
    "log",
    "show",
    "diff",
    "blame",
    "rev-parse",
    "ls-files",
    "describe",
    "shortlog",
    "cat-file",
    "init",
    "version",
    "rev-list",
    "merge-base",
    "ls-tree",
}
Nested = Callable[[str], None]  # checks a command git would run (`-c alias.x=!cmd`) as a command of its own
Dangers = Iterable[tuple[Kind, str]]
Handler = Callable[[list[str], list[str], list[str], Path | None, Path, Nested], Dangers]

PUSH = ("force", "force-with-lease", "force-if-includes", "mirror", "delete", "prune")
RUNS_PROGRAM = ("upload-pack", "receive-pack", "exec", "open-files-in-pager", "extcmd")


def git_dangers(
    args: list[Arg], cwd: Path | None, workspace: Path, nested: Callable[[str], None]
) -> Iterable[tuple[Kind, str]]:
    index = 0
    while index < len(args):
        arg = args[index]
        if isinstance(arg, Unknown):
            yield (
                "unchecked",
                f"git gets an option or subcommand from an expansion (`{arg.text}`) that cannot be checked here",
            )
            return
        if not arg.startswith("-"):
            break
        value = (
            args[index + 1]
            if arg in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env") and index + 1 < len(args)
            else None
        )
        if isinstance(value, Unknown):
            yield "unchecked", f"git gets `{arg}` from an expansion (`{value.text}`) that cannot be checked here"
            return
        setting = (
            value
            if arg in ("-c", "--config-env")
            else arg.split("=", 1)[1]
            if arg.startswith("--config-env=")
            else None
        )
        key, _, setting_value = (setting or "").partition("=")  # --config-env=KEY=ENVVAR: the value is not known
        if setting is not None and (runs_program(key, setting_value) if arg == "-c" else exec_key(key)):
            yield "destructive", f"sets `{setting.split('=', 1)[0]}`, which makes git run a program (`{arg} {setting}`)"
            return
        if arg.startswith("--exec-path="):
            yield "destructive", f"makes git run its programs from another folder (`{arg}`)"
            return
        index += 2 if value is not None else 1
    if index >= len(args):
        return
    sub = args[index]
    rest = args[index + 1 :]
    unknown = next((a for a in rest if isinstance(a, Unknown)), None)
    if unknown is not None and sub not in ARGS_MAY_VARY:
        yield (
            "unchecked",
            f"`git {sub}` gets an argument from an expansion (`{unknown.text}`) that cannot be checked here",
        )
        return
    words = [a for a in rest if isinstance(a, str)]
    options, operands = options_and_operands(words)
    for option in options:
        if (
            long_option(option, RUNS_PROGRAM)
            or (sub in ("clone", "ls-remote") and option.startswith("-u"))
            or (sub == "grep" and option.startswith("-O"))
            or (sub in ("clone", "submodule") and option in ("-c", "--config"))
        ):
            yield "destructive", f"makes git run a program given on its command line (`{option}`)"
            return
    if sub == "clone" and any(o.startswith(("--config=", "-c=")) for o in options):
        yield "unchecked", "sets git configuration for the clone"
        return
    handler = HANDLERS.get(sub) if isinstance(sub, str) else None
    if handler is not None:
        yield from handler(options, operands, words, cwd, workspace, nested)


def _push(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    for option in options:
        if long_option(option, PUSH):
            what = (
                "deletes remote branches"
                if long_option(option, ("delete", "prune"))
                else "overwrites and deletes remote branches"
                if long_option(option, ("mirror",))
                else "rewrites remote history"
            )
            yield "destructive", f"{what} (`{option}`)"
            return
        if short_cluster(option, "fd"):
            yield (
                "destructive",
                f"{'rewrites remote history' if short_cluster(option, 'f') else 'deletes remote branches'} (`{option}`)",
            )
            return
    for refspec in operands[1:]:
        if refspec.startswith("+") and len(refspec) > 1:
            yield "destructive", f"force-pushes, rewriting remote history (refspec `{refspec}`)"
            return
        if refspec.startswith(":") and len(refspec) > 1:
            yield "destructive", f"deletes a remote branch (refspec `{refspec}`)"
            return


def _reset(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    for option in options:
        if long_option(option, ("hard", "merge")):
            yield "destructive", f"discards uncommitted changes (`{option}`)"
            return


def _checkout(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    """`git checkout BRANCH` is fine; `git checkout -- .`, `git checkout FILE`, `-f` discard uncommitted work."""
    if any(long_option(o, ("force", "pathspec-from-file", "ours", "theirs")) or short_cluster(o, "f") for o in options):
        yield "destructive", "overwrites files, discarding their uncommitted changes"
        return
    valued = {"-b", "-B", "--orphan"}
    names = [words[i + 1] for i, w in enumerate(words[:-1]) if w in valued]
    paths = words[words.index("--") + 1 :] if "--" in words else []
    candidates = [o for o in operands if o not in names]
    if paths or any(_is_path(o, cwd) for o in candidates) or len(candidates) > 1:
        yield "destructive", "overwrites files with another version, discarding their uncommitted changes"


def _is_path(operand: str, cwd: Path | None) -> bool:
    if cwd is None:
        return True  # cannot tell a branch from a file here
    resolved = normal(operand.split(":", 1)[-1] if operand.startswith(":") else operand, cwd)
    return resolved is None or resolved.exists() or any(c in operand for c in "*?[")


def _restore(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    staged_only = any(long_option(o, ("staged",)) or short_cluster(o, "S") for o in options) and not any(
        long_option(o, ("worktree",)) or short_cluster(o, "W") for o in options
    )
    if not staged_only:
        yield "destructive", "discards uncommitted changes in the working tree"


def _switch(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if any(long_option(o, ("discard-changes", "force")) or short_cluster(o, "f") for o in options):
        yield "destructive", "discards uncommitted changes"


def _clean(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    dry = any(long_option(o, ("dry-run",)) or short_cluster(o, "n") for o in options)
    if not dry and any(long_option(o, ("force",)) or short_cluster(o, "f") for o in options):
        yield "destructive", "deletes untracked files, which no commit holds"


def _branch(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    delete = any(long_option(o, ("delete",)) or short_cluster(o, "dD") for o in options)
    force = any(long_option(o, ("force",)) or short_cluster(o, "fD") for o in options)
    if delete and force:
        yield "destructive", "deletes a branch even when it is not merged"


def _stash(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if operands[:1] in (["drop"], ["clear"]):
        yield "destructive", f"deletes stashed changes (`stash {operands[0]}`)"


def _rebase(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    for index, word in enumerate(words):
        command = (
            words[index + 1]
            if word in ("-x", "--exec") and index + 1 < len(words)
            else word.split("=", 1)[1]
            if word.startswith("--exec=")
            else None
        )
        if command is not None:
            nested(command)
    yield from ()  # only scripts to read, no danger of its own


def _bisect(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if words[:1] == ["run"] and len(words) > 1:
        nested(" ".join(_quote(w) for w in words[1:]))
    yield from ()  # only scripts to read, no danger of its own


def _submodule(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if "foreach" in words:
        script = [w for w in words[words.index("foreach") + 1 :] if w != "--recursive"]
        if script:
            nested(" ".join(script))
    yield from ()  # only scripts to read, no danger of its own


def _quote(word: str) -> str:
    return shlex.quote(word)


def _rm(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if any(short_cluster(o, "r") for o in options) and not any(long_option(o, ("cached",)) for o in options):
        for target in operands:
            if problem := delete_target_problem(target, cwd, workspace):
                yield "destructive", f"deletes recursively: {problem}"
                return


def _rewrites(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    yield "destructive", "rewrites history and runs the filters it is given"


def _reflog(
    options: list[str], operands: list[str], words: list[str], cwd: Path | None, workspace: Path, nested: Nested
) -> Dangers:
    if operands[:1] in (["expire"], ["delete"]):
        yield "destructive", "deletes reflog entries, the way back to lost commits"


HANDLERS: dict[str, Handler] = {
    "push": _push,
    "reset": _reset,
    "checkout": _checkout,
    "restore": _restore,
    "switch": _switch,
    "clean": _clean,
    "branch": _branch,
    "stash": _stash,
    "config": config_dangers,
    "rebase": _rebase,
    "bisect": _bisect,
    "submodule": _submodule,
    "rm": _rm,
    "filter-branch": _rewrites,
    "filter-repo": _rewrites,
    "reflog": _reflog,
}
