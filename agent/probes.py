"""Inputs beyond the task's examples, and what an answer returns for them: how one-shot answers that all pass
the examples are told apart.

Why: measured on HumanEval (docs/eval.md), the first answer that passed the examples was right 22 of 22 times,
but later, hotter answers that passed them only 4 of 7. Right answers agree with each other on inputs the
examples do not show; wrong ones each go wrong their own way (AlphaCode's clustering). The probes are the
examples' own calls with one argument changed a little (a number one more or less, a list reversed or
shortened, a string reversed...), run in the sandbox like any of the model's code."""

from __future__ import annotations

import ast
import json
import math
import shlex
from itertools import zip_longest
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.checks import FinishGate, run_verification
from agent.examples import ModuleExamples

MOST_PROBES = 24
RUNNER = Path(__file__).with_name("probe_runner.py")
PROBES_SECONDS = 30  # a second per probe at most (agent/probe_runner.py), and Python's start
AGREEING_SHARE = 0.5  # two answers agree when both return a value on at least this share of the probes


class Probe(BaseModel):
    function: str
    arguments: str  # a Python literal: the tuple of positional arguments


Behaviour = list[str | None]  # per probe, a hash of what the answer returned, None where it raised or hung


def probes(module: ModuleExamples) -> list[Probe]:
    """Up to MOST_PROBES calls the examples do not make: each example's call with one argument changed."""
    calls = [call for source, _ in module.examples() for call in _literal_calls(source, set(module.names))]
    given = {(name, repr(arguments)) for name, arguments in calls}
    per_call = [_changed_calls(name, arguments) for name, arguments in calls]
    found: dict[tuple[str, str], Probe] = {}
    for round_ in zip_longest(*per_call):  # one change of each example at a time: every example gets probed
        for probe in filter(None, round_):
            key = (probe.function, probe.arguments)
            if key not in given and len(found) < MOST_PROBES:
                found.setdefault(key, probe)
    return list(found.values())


def runner_command(python: str, module_path: str, chosen: list[Probe]) -> str:
    """The command that runs the probes on the module as it is now (agent/probe_runner.py prints the result)."""
    module = module_path.removesuffix(".py").replace("/", ".")
    listed = json.dumps([[p.function, p.arguments] for p in chosen])
    return f"{python} -c {shlex.quote(RUNNER.read_text())} {shlex.quote(module)} {shlex.quote(listed)}"


def read_behaviour(output: str, count: int) -> Behaviour | None:
    """The runner's result from its output, or None when it did not get that far (the module failed to import)."""
    for line in reversed(output.splitlines()):
        if line.startswith("PROBES "):
            try:
                values = json.loads(line.removeprefix("PROBES "))
            except ValueError:
                return None
            ok = isinstance(values, list) and len(values) == count
            return [v if isinstance(v, str) else None for v in values] if ok else None
    return None


def agree(first: Behaviour, second: Behaviour) -> bool:
    """Both return the same wherever both return something, and both return something on at least
    AGREEING_SHARE of the probes: an input outside the function's domain may raise in one right answer and
    not in another, but an answer that raises everywhere agrees with nothing."""
    both = [(a, b) for a, b in zip(first, second) if a is not None and b is not None]
    return bool(both) and len(both) >= AGREEING_SHARE * len(first) and all(a == b for a, b in both)


def _literal_calls(source: str, names: set[str]) -> list[tuple[str, tuple]]:
    """The calls in an example's source to one of `names` with only literal positional arguments."""
    try:
        tree = ast.parse(source.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            if node.keywords:
                continue
            try:
                found.append((node.func.id, tuple(ast.literal_eval(a) for a in node.args)))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return found


def _changed_calls(name: str, arguments: tuple) -> list[Probe]:
    """The call with one argument replaced by each of its variants, in turn."""
    changed = []
    for position, argument in enumerate(arguments):
        for variant in variants(argument):
            new = (*arguments[:position], variant, *arguments[position + 1 :])
            if _round_trips(new):
                changed.append(Probe(function=name, arguments=repr(new)))
    return changed


def variants(value: Any) -> list[Any]:
    """Small changes of a literal that usually keep it a valid input: what a wrong answer gets wrong first."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, value + 2, 0, 1, -value, value * 2]
    if isinstance(value, float):
        return [value + 0.5, value - 0.5, -value, 0.0, value * 2] if math.isfinite(value) else []
    if isinstance(value, str):
        return [value[::-1], value[1:], value[:-1], value + value[:1], value.swapcase(), value * 2, ""]
    if isinstance(value, list | tuple):
        items = list(value)
        shapes = [items[::-1], items[1:], items[:-1], items + items[:1], items * 2, []]
        if items:
            shapes += [[first, *items[1:]] for first in variants(items[0])[:3]]
        return [type(value)(shape) for shape in shapes]
    if isinstance(value, dict):
        keys = list(value)
        return [{k: value[k] for k in keys[1:]}, {k: value[k] for k in keys[::-1]}, {}] if keys else []
    return []


def _round_trips(arguments: tuple) -> bool:
    """The arguments survive repr and literal_eval (the runner reads them so), and are small."""
    text = repr(arguments)
    if len(text) > 10_000:
        return False
    try:
        return ast.literal_eval(text) == arguments
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def behaviour(gate: FinishGate, module: str, chosen: list[Probe]) -> Behaviour | None:
    """What the module as it is now returns for each probe, run like the task's check (sandbox, time limit);
    None when the runner did not finish (the module does not import, or it all ran past the time)."""
    python = gate.python()
    config = gate.config.model_copy(update={"command_timeout": min(gate.config.command_timeout, PROBES_SECONDS)})
    outcome = run_verification(gate.workspace, runner_command(python, module, chosen), config)
    return read_behaviour(outcome.output_tail, len(chosen))
