"""Command-line options the way getopt reads them: clusters (`-rf`), values, `--`, unique long prefixes."""

from __future__ import annotations

from collections.abc import Iterable


def options_and_operands(args: list[str], takes_value: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(options, operands), options and operands in any order as GNU tools take them; `--` ends options.
    An option that takes a value comes back with it as `-t=VALUE` / `--name=VALUE` (the cluster `-vt` too)."""
    valued = set(takes_value)
    options: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands += args[index + 1 :]
            break
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if "=" not in arg and name in valued and index + 1 < len(args):
                arg = f"{name}={args[index + 1]}"
                index += 1
            options.append(arg)
        elif arg.startswith("-") and arg != "-":
            options.append(arg)
            for position, letter in enumerate(arg[1:], 2):
                if f"-{letter}" in valued:
                    rest = arg[position:]
                    if rest:
                        options.append(f"-{letter}={rest}")
                    elif index + 1 < len(args):
                        options.append(f"-{letter}={args[index + 1]}")
                        index += 1
                    break
        else:
            operands.append(arg)
        index += 1
    return options, operands


def long_option(option: str, names: Iterable[str]) -> bool:
    """Whether `--opt[=v]` is, or abbreviates, one of `names` (git and getopt take any unique prefix; an
    ambiguous one is an error there, and counts as a match here)."""
    if not option.startswith("--") or option == "--":
        return False
    given = option[2:].split("=", 1)[0]
    return bool(given) and any(name.startswith(given) for name in names)


def short_cluster(option: str, letters: str) -> bool:
    """Whether a short option cluster (`-rf`) holds one of `letters`."""
    if not option.startswith("-") or option.startswith("--"):
        return False
    return any(letter in option[1:].split("=", 1)[0] for letter in letters)


def option_value(options: list[str], short: str | None, names: Iterable[str]) -> list[str]:
    """Values given to `-x VALUE` / `--name=VALUE` (as options_and_operands returns them)."""
    names = tuple(names)
    values = []
    for option in options:
        if short and option.startswith(short + "="):
            values.append(option[len(short) + 1 :])
        elif "=" in option and long_option(option, names):
            values.append(option.split("=", 1)[1])
    return values
