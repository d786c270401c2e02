"""Where the next command runs: `cd` is followed linearly through a command line. A `cd` that may fail (its
folder does not exist yet) leaves the folder unknown past its statement unless `&&` guards it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from tools.approval.bash_syntax import Arg, Unknown
from tools.approval.paths import normal


@dataclass(frozen=True)
class State:
    cwd: Path | None  # where the next command runs; None: not known here
    certain: bool = True  # False: a `cd` that may fail decided cwd; only `&&` keeps it past that statement


def change_dir(args: list[Arg], state: State) -> State:
    operands = [a for a in args if not (isinstance(a, str) and a.startswith("-") and a != "-")]
    if not operands:
        return State(normal("~", None))
    target = operands[0]
    if isinstance(target, Unknown) or target == "-":
        return State(None)
    resolved = normal(target, state.cwd)
    if resolved is None:
        return State(None)
    return State(resolved, certain=is_dir(resolved))


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, a loop of links: not a folder a cd gets into
        return False


def settle(state: State) -> State:
    """Past a statement boundary a `cd` that may have failed leaves the folder unknown."""
    return state if state.certain else State(None)


def merge(a: State, b: State) -> State:
    return a if a.cwd == b.cwd and b.certain else replace(a, cwd=None, certain=True)
