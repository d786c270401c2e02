"""Commands that may run unasked outside a sandbox: a reviewed allow-list of read-only operations.

Inside the sandbox the sandbox is the boundary. Outside it (`sandbox = "full-access"`, or no bubblewrap) a
deny-list cannot win the race against the next trick, so `auto` runs a command unasked only when every simple
command in it is known here: its program, each option, and its operands. Anything else asks (refused where
nobody can be asked). The model follows Codex CLI's "known safe commands"
(codex-rs/core/src/command_safety/is_safe_command.rs), stricter in three ways: options are allow-listed, not
deny-listed; operands that name files stay below the folder the command starts in (no absolute path, `~` or
`..`), so reading your secrets outside the project asks; and the program must not resolve into the workspace
(a planted `.venv/bin/ls` is not `ls`).

`PROGRAMS` is the data: one entry per program (`git` per subcommand), each with the reason it is safe. The
list is documented in docs/approval.md; change both together.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tools.approval.git_config import runs_program

Operands = Literal["paths", "pattern-then-paths", "words", "none"]


@dataclass(frozen=True)
class Program:
    reason: str  # why it cannot change anything or run anything else
    flags: str = ""  # short options without a value (clusters allowed: `-la`)
    valued: str = ""  # short options that take a value (`-n 5`, `-n5`)
    long: frozenset[str] = frozenset()  # long options without a value, exactly as written (no abbreviations)
    long_valued: frozenset[str] = frozenset()  # long options with a value (`--max-count=5`, `--max-count 5`)
    operands: Operands = "paths"
    max_operands: int | None = None  # `uniq IN OUT` writes OUT: one operand at most
    numeric: bool = False  # `-5` is an option (`head -5`, `git log -3`)


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_DIFF_LONG = _set(
    "--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--summary", "--patch", "--no-patch",
    "--raw", "--cached", "--staged", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-all-space",
    "--ignore-space-change", "--ignore-blank-lines", "--word-diff", "--color-words", "--minimal", "--histogram",
    "--patience", "--no-renames", "--full-index", "--binary", "--exit-code", "--quiet", "--check",
)  # fmt: skip
_DIFF_VALUED = _set("--unified", "--diff-filter", "--stat-width", "--color", "--relative", "--abbrev", "--word-diff")
_LOG_LONG = _DIFF_LONG | _set(
    "--oneline", "--graph", "--decorate", "--no-decorate", "--all", "--branches", "--tags", "--reverse",
    "--first-parent", "--no-merges", "--merges", "--abbrev-commit", "--follow", "--source", "--topo-order",
    "--date-order", "--left-right", "--boundary", "--name-status",
)  # fmt: skip
_LOG_VALUED = _DIFF_VALUED | _set(
    "--max-count", "--skip", "--since", "--until", "--after", "--before", "--author", "--committer", "--grep",
    "--format", "--pretty", "--date", "--decorate",
)  # fmt: skip
_GREP_LONG = _set(
    "--recursive", "--ignore-case", "--line-number", "--count", "--files-with-matches", "--files-without-match",
    "--word-regexp", "--line-regexp", "--invert-match", "--fixed-strings", "--extended-regexp", "--perl-regexp",
    "--basic-regexp", "--only-matching", "--quiet", "--silent", "--no-filename", "--with-filename", "--null",
    "--no-messages", "--byte-offset", "--initial-tab", "--text", "--binary",
)  # fmt: skip
_GREP_VALUED = _set(
    "--include", "--exclude", "--exclude-dir", "--regexp", "--file", "--max-count", "--context", "--after-context",
    "--before-context", "--color", "--colour", "--binary-files", "--label",
)  # fmt: skip

READ = "reads files and prints what it found; writes nothing, runs nothing"
PRINT = "prints its arguments or a value; touches no file"

PROGRAMS: dict[str, Program] = {
    "cat": Program(READ, flags="AbeEnstTuv", long=_set("--number", "--number-nonblank", "--show-all")),
    "head": Program(READ, flags="qvz", valued="nc", long_valued=_set("--lines", "--bytes"), numeric=True),
    "tail": Program(READ, flags="qvzf", valued="nc", long_valued=_set("--lines", "--bytes"), numeric=True),
    "wc": Program(READ, flags="clmwL", long=_set("--lines", "--words", "--chars", "--bytes")),
    "ls": Program(
        "lists folders; writes nothing",
        flags="1aAbBcCdfFghHiklLmnNopqQrRsStuUvxXZ",
        long=_set("--all", "--almost-all", "--human-readable", "--recursive", "--classify", "--directory"),
        long_valued=_set("--color", "--sort", "--time-style", "--format", "--ignore", "--hide"),
    ),
    "tree": Program(
        "lists folders (no -o: it writes a file)", flags="adfFilLpsughDCnNrtv", valued="LIP", long=_set("--noreport")
    ),
    "stat": Program(READ, flags="LtF", valued="c", long_valued=_set("--format", "--printf")),
    "file": Program(READ, flags="bLhiNz", long=_set("--brief", "--mime", "--mime-type")),
    "du": Program(READ, flags="ahcsSkmbLx", valued="d", long_valued=_set("--max-depth")),
    "df": Program("prints disk usage; writes nothing", flags="hHTiklPa"),
    "grep": Program(
        READ,
        flags="rRinclLwxvFEPGoqsHhZabTIUz",
        valued="efmABCD",
        long=_GREP_LONG,
        long_valued=_GREP_VALUED,
        operands="pattern-then-paths",
    ),
    "egrep": Program(
        READ,
        flags="rRinclLwxvoqsHh",
        valued="efmABC",
        long=_GREP_LONG,
        long_valued=_GREP_VALUED,
        operands="pattern-then-paths",
    ),
    "fgrep": Program(
        READ,
        flags="rRinclLwxvoqsHh",
        valued="efmABC",
        long=_GREP_LONG,
        long_valued=_GREP_VALUED,
        operands="pattern-then-paths",
    ),
    "rg": Program(
        "searches files (no --pre, --search-zip or --hostname-bin: they run programs)",
        flags="iSsnNlcwxvFoquLH.",
        valued="gtTmABCe",
        long=_set("--hidden", "--no-ignore", "--files", "--count", "--line-number", "--fixed-strings", "--json"),
        long_valued=_set("--glob", "--type", "--type-not", "--max-count", "--context", "--max-depth", "--color"),
        operands="pattern-then-paths",
    ),
    "sort": Program(
        READ + " (no -o: it writes a file)",
        flags="bdfgiMhnRrVsuz",
        valued="kt",
        long_valued=_set("--key", "--field-separator"),
    ),
    "uniq": Program(
        READ + " (one operand: a second one is a file it writes)", flags="cdDiuz", valued="fsw", max_operands=1
    ),
    "cut": Program(READ, flags="sz", valued="bcdf", long_valued=_set("--fields", "--delimiter", "--characters")),
    "nl": Program(READ, valued="bhfvinswd"),
    "tac": Program(READ),
    "rev": Program(READ),
    "paste": Program(READ, flags="sz", valued="d"),
    "comm": Program(READ, flags="123", max_operands=2),
    "diff": Program(
        READ, flags="qsuicwbBEtTrNaepy", valued="UCx", long=_set("--brief", "--recursive", "--unified"), max_operands=2
    ),
    "cmp": Program(READ, flags="bls", max_operands=2),
    "md5sum": Program(READ, flags="bctwz"),
    "sha1sum": Program(READ, flags="bctwz"),
    "sha256sum": Program(READ, flags="bctwz"),
    "od": Program(READ, flags="bcdfiloxsv", valued="AjNtw"),
    "hexdump": Program(READ, flags="bcCdovx", valued="ns"),
    "xxd": Program(
        READ + " (one operand: a second one is a file it writes)", flags="pic", valued="lsgc", max_operands=1
    ),
    "strings": Program(READ, flags="a", valued="nt"),
    "basename": Program(PRINT, flags="az", valued="s", operands="words"),
    "dirname": Program(PRINT, flags="z", operands="words"),
    "realpath": Program(PRINT, flags="emsqz", operands="paths"),
    "readlink": Program(PRINT, flags="femnqsvz", operands="paths"),
    "echo": Program(PRINT, flags="neE", operands="words"),
    "printf": Program(PRINT, operands="words"),
    "seq": Program(PRINT, flags="w", valued="fs", operands="words"),
    "expr": Program(PRINT, operands="words"),
    "test": Program(PRINT + " (a test on files or strings)", operands="words"),
    "[": Program(PRINT + " (a test on files or strings)", operands="words"),
    "true": Program("does nothing", operands="words"),
    "false": Program("does nothing", operands="words"),
    "pwd": Program(PRINT, flags="LP", operands="none"),
    "whoami": Program(PRINT, operands="none"),
    "id": Program(PRINT, flags="gGnru", operands="words"),
    "uname": Program(PRINT, flags="asnrvmpio", operands="none"),
    "date": Program(PRINT + " (no -s: it sets the clock)", flags="uRI", valued="d", operands="words"),
    "which": Program(PRINT, flags="a", operands="words"),
    "type": Program(PRINT, flags="aftpP", operands="words"),
    "tr": Program("filters standard input to standard output", flags="cdsCt", operands="words"),
    "cd": Program("changes the folder of the commands after it (within the project: operands are checked)"),
    "sed": Program("prints lines (only `sed -n Np` / `sed -n M,Np`: other scripts can write files and run programs)"),
    "find": Program("lists files (only the primaries below: -exec, -delete, -fprint... are not on the list)"),
    "git status": Program(
        "shows the working tree's state",
        flags="sbvuz",
        long=_set("--short", "--branch", "--long", "--verbose", "--ignored", "--no-renames"),
        long_valued=_set("--porcelain", "--untracked-files"),
        operands="paths",
    ),
    "git diff": Program(
        "shows changes", flags="pRwbaM", valued="U", long=_DIFF_LONG, long_valued=_DIFF_VALUED, operands="words"
    ),
    "git log": Program(
        "shows history",
        flags="pnM",
        valued="nU",
        long=_LOG_LONG,
        long_valued=_LOG_VALUED,
        operands="words",
        numeric=True,
    ),
    "git show": Program(
        "shows commits and files in them",
        flags="pwsM",
        valued="U",
        long=_LOG_LONG,
        long_valued=_LOG_VALUED,
        operands="words",
    ),
    "git branch": Program(
        "lists branches (no operand: one would create a branch)",
        flags="alrv",
        long=_set("--list", "--all", "--remotes", "--verbose", "--show-current"),
        long_valued=_set("--format", "--sort", "--contains", "--merged"),
        operands="none",
    ),
    "git rev-parse": Program(
        PRINT + " (names of commits and folders)",
        long=_set(
            "--show-toplevel", "--abbrev-ref", "--short", "--git-dir", "--is-inside-work-tree", "--verify", "--quiet"
        ),
        operands="words",
    ),
    "git ls-files": Program(
        "lists tracked files",
        flags="cdmotsz",
        long=_set("--others", "--exclude-standard", "--cached", "--modified"),
        operands="paths",
    ),
}

# find: primaries that only test or print, with how many values each takes.
FIND_PRIMARIES = {
    **dict.fromkeys(("-print", "-print0", "-prune", "-empty", "-readable", "-writable", "-executable", "-not",
                     "-a", "-o", "-and", "-or", "!", "(", ")", "-true", "-false", "-depth", "-xdev", "-ls"), 0),
    **dict.fromkeys(("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                     "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime", "-mmin", "-atime", "-amin",
                     "-ctime", "-cmin", "-newer", "-perm", "-user", "-group", "-links", "-lname", "-ilname",
                     "-printf", "-uid", "-gid", "-regextype", "-samefile", "-inum"), 1),
}  # fmt: skip
FIND_LEADING = {"-L", "-H", "-P"}

# Shell builtins: bash never looks them up on PATH, so a planted file of that name does not replace them.
BUILTINS = {"cd", "echo", "printf", "pwd", "test", "[", "true", "false", "type"}
SED_PRINT = re.compile(r"\d+(,\d+)?p")
NOT_STATIC = re.compile(r"[$`]")
GIT_SAFE_GLOBAL = {"--no-pager", "--no-optional-locks"}  # `-c`, `-C`, `--git-dir`, `--exec-path`: not on the list


def unknown_part(words: list[str], workspace: Path, search_path: str | None) -> str | None:
    """None when `words` (one simple command, as the analysis gives it) is on the list; else what is not,
    in words for the question a person is asked."""
    if not words:
        return None
    program = words[0]
    if "=" in program and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", program):
        return f"sets a variable for the command ({program.split('=', 1)[0]})"
    if "/" in program or NOT_STATIC.search(program):
        return f"`{program}` is not a plain program name"
    if program not in PROGRAMS and program != "git":
        return f"`{program}` is not on the list of known read-only commands"
    if program not in BUILTINS and (problem := _resolves_into_workspace(program, workspace, search_path)):
        return problem
    args = words[1:]
    if program == "find":
        return _find(args)
    if program == "sed":
        ok = len(args) in (2, 3) and args[0] == "-n" and SED_PRINT.fullmatch(args[1]) and _path_ok(args[2:])
        return None if ok else "`sed` runs unasked only as `sed -n Np` / `sed -n M,Np`"
    if program == "git":
        return _git(args, workspace)
    if program == "cd" and (len(args) != 1 or args[0].startswith("-")):
        return "`cd` runs unasked only with one folder (alone it goes to $HOME, `cd -` back)"
    if program == "date" and any(not a.startswith(("+", "-")) for a in args):
        return "`date` with an operand other than +FORMAT may set the clock"
    return _check(program, PROGRAMS[program], args)


def _check(name: str, entry: Program, args: list[str]) -> str | None:
    operands: list[str] = []
    index, options_done = 0, False
    while index < len(args):
        arg = args[index]
        index += 1
        if options_done or arg == "-" or not arg.startswith("-") or (entry.operands == "words" and not _option(arg)):
            operands.append(arg)
            continue
        if arg == "--":
            options_done = True
            continue
        if arg.startswith("--"):
            option = arg.split("=", 1)[0]
            if option in entry.long and "=" not in arg:
                continue
            if option in entry.long_valued:
                index += 0 if "=" in arg else 1
                continue
            return f"`{name} {arg}` is not on the list of known read-only options"
        if entry.numeric and arg[1:].isdigit():
            continue
        for position, letter in enumerate(arg[1:], 2):
            if letter in entry.valued:
                index += 0 if arg[position:] else 1
                break
            if letter not in entry.flags:
                return f"`{name} -{letter}` is not on the list of known read-only options"
    if entry.operands == "none" and operands:
        return f"`{name}` runs unasked only without operands"
    if entry.max_operands is not None and len(operands) > entry.max_operands:
        return f"`{name}` with {len(operands)} operands may write a file"
    if entry.operands == "words":
        return None
    if entry.operands == "pattern-then-paths" and operands and not _pattern_given(args):
        operands = operands[1:]
    return _path_problem(operands)


def _option(arg: str) -> bool:
    """For commands whose operands are words (`echo -n x`): only a leading `-x` cluster is an option."""
    return bool(re.fullmatch(r"-[A-Za-z]+|--[a-z-]+(=.*)?", arg))


def _pattern_given(args: list[str]) -> bool:
    return any(a in ("-e", "-f", "--regexp", "--file") or re.match(r"-[A-Za-z]*[ef]|--(regexp|file)=", a) for a in args)


def _path_ok(operands: list[str]) -> bool:
    return _path_problem(operands) is None


def _path_problem(operands: list[str]) -> str | None:
    """Operands that name files stay below the folder the command starts in."""
    for operand in operands:
        if NOT_STATIC.search(operand):
            return f"`{operand}` is only known when the command runs"
        if operand.startswith(("/", "~")) or any(_may_be_parent(part) for part in Path(operand).parts):
            return f"`{operand}` is outside the project"
    return None


def _may_be_parent(part: str) -> bool:
    """`..`, or a glob that older bash expands to it (`.?`, `.*`)."""
    return part == ".." or (any(c in part for c in "*?[") and fnmatch.fnmatchcase("..", part))


def _find(args: list[str]) -> str | None:
    index = 0
    while index < len(args) and args[index] in FIND_LEADING:
        index += 1
    paths = []
    while index < len(args) and not args[index].startswith("-") and args[index] not in ("!", "(", ")"):
        paths.append(args[index])
        index += 1
    while index < len(args):
        primary = args[index]
        if primary not in FIND_PRIMARIES:
            return f"`find {primary}` is not on the list of known read-only primaries"
        index += 1 + FIND_PRIMARIES[primary]
    return _path_problem(paths)


def _git(args: list[str], workspace: Path) -> str | None:
    index = 0
    while index < len(args) and args[index] in GIT_SAFE_GLOBAL:
        index += 1
    if index >= len(args):
        return "`git` with no subcommand"
    sub = args[index]
    entry = PROGRAMS.get(f"git {sub}")
    if entry is None or sub.startswith("-"):
        return f"`git {sub}` is not on the list of known read-only commands"
    if problem := _repository_runs_programs(workspace):
        return problem
    return _check(f"git {sub}", entry, args[index + 1 :])


def _repository_runs_programs(workspace: Path) -> str | None:
    """git status/diff/log run what the repository's own config names (fsmonitor, filters, textconv): such a
    repository's git commands ask."""
    try:
        run = subprocess.run(
            ["git", "config", "--null", "--list", "--show-scope"],
            cwd=workspace,
            capture_output=True,
            env={**os.environ, "GIT_CONFIG_COUNT": "0"},
            stdin=subprocess.DEVNULL,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the repository's git config could not be read ({exc})"
    if run.returncode != 0:
        return "the repository's git config could not be read"
    fields = run.stdout.decode("utf-8", "replace").split("\0")
    for scope, entry in zip(fields[::2], fields[1::2]):
        key, _, value = entry.partition("\n")
        if scope in ("local", "worktree") and runs_program(key.lower(), value):
            return f"the repository's git config sets `{key}`, which runs a program"
    return None


def _resolves_into_workspace(program: str, workspace: Path, search_path: str | None) -> str | None:
    found = shutil.which(program, path=search_path)
    if found is None:
        return f"`{program}` is not installed here"
    real = Path(found).resolve()
    if real == workspace or workspace in real.parents:
        return f"`{program}` would run {found}, a file in the project"
    return None
