"""Which git configuration makes git run a program (repository-controlled execution: `core.fsmonitor`,
`core.hooksPath`, `core.pager`, `filter.*`, `diff.external`, `alias.*`...), and what `git config` would set."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from tools.approval.options import long_option, options_and_operands, short_cluster

Kind = Literal["destructive", "unchecked"]

# configuration keys (lower case; subsections as `*`) whose value git runs as a program, or that load more
# configuration that could
EXEC_KEYS = (
    "core.fsmonitor",
    "core.hookspath",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.gitproxy",
    "core.askpass",
    "core.alternaterefscommand",
    "core.worktree",
    "sequence.editor",
    "pager.*",
    "alias.*",
    "filter.*",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "difftool.*",
    "merge.*.driver",
    "mergetool.*",
    "credential.helper",
    "credential.*",
    "gpg.program",
    "gpg.*.program",
    "include.path",
    "includeif.*",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "protocol.*",
    "url.*",
    "hook.*",
    "submodule.*",
    "browser.*",
    "web.browser",
    "man.*",
    "instaweb.*",
    "sendemail.*",
    "ssh.variant",
    "receive.procreceiverefs",
    "safe.directory",
    "init.templatedir",
    "feature.*",
    "extensions.*",
    "gc.*",
    "maintenance.*",
    "trace2.*",
)
# programs a pager or editor setting may name without running anything that matters (`PAGER=cat`)
HARMLESS_COMMANDS = {"", "cat", "less", "more", "true", ":", "head", "tail", "less -R", "less -FRX"}
PAGER_KEYS = ("core.pager", "pager.*", "core.editor", "sequence.editor")


def exec_key(key: str) -> bool:
    section, _, rest = key.partition(".")
    name = rest.rpartition(".")[2]
    normalised = f"{section.lower()}.{rest[: len(rest) - len(name)]}{name.lower()}" if rest else key.lower()
    return any(
        fnmatch.fnmatchcase(normalised, pattern) or fnmatch.fnmatchcase(key.lower(), pattern) for pattern in EXEC_KEYS
    )


def runs_program(key: str, value: str | None) -> bool:
    """Whether setting `key` to `value` makes git run a program (a pager set to `cat` does not)."""
    if not exec_key(key):
        return False
    harmless = value is not None and value.strip() in HARMLESS_COMMANDS
    return not (harmless and any(fnmatch.fnmatchcase(key.lower(), pattern) for pattern in PAGER_KEYS))


def config_dangers(
    options: list[str],
    operands: list[str],
    words: list[str],
    cwd: Path | None,
    workspace: Path,
    nested: Callable[[str], None],
) -> Iterable[tuple[Kind, str]]:
    """`git config`: setting a key that makes git run a program; an editor that could set any key."""
    options, operands = options_and_operands(words, takes_value=CONFIG_VALUED)  # `-f FILE KEY VALUE`
    if any(long_option(o, ("edit",)) or short_cluster(o, "e") for o in options) or operands[:1] == ["edit"]:
        yield "unchecked", "opens git configuration in an editor, so any setting could change"
        return
    reading = any(
        long_option(
            o,
            (
                "get",
                "get-all",
                "get-regexp",
                "get-urlmatch",
                "list",
                "unset",
                "unset-all",
                "remove-section",
                "rename-section",
                "show-origin",
                "show-scope",
                "null",
                "name-only",
            ),
        )
        or short_cluster(o, "lz")
        for o in options
    )
    if operands[:1] in (["get"], ["list"], ["unset"], ["remove-section"], ["rename-section"]):
        return
    if operands[:1] == ["set"]:
        operands = operands[1:]
    elif reading and not any(long_option(o, ("add", "replace-all")) for o in options):
        return
    if len(operands) >= 2 or any(long_option(o, ("add", "replace-all")) for o in options):
        key = operands[0] if operands else ""
        if runs_program(key, operands[1] if len(operands) > 1 else None):
            yield "destructive", f"sets `{key}`, which makes git run a program"


CONFIG_VALUED = {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--file-type"}
