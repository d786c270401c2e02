"""Checks written from the task before any code: a second opinion where the docstring examples are the only one.

A small model that fails an example often bends its code to that one example (`numbers[0] * numbers[1] *
numbers[2] * numbers[3]` for a product, HumanEval/8), and the examples then pass. A few asserts the model
wrote from the task alone, on other inputs, catch that: they were written apart from the code (CodeT's
point: tests and code from separate samples check each other). They are often wrong too (the 1.5B model
gets hand-computed expected values wrong), and shown to the model a wrong one made it bend right code or
edit asserts that are in no file (HumanEval/0: 20 steps instead of 2), so they are never shown: a verified
attempt that fails some is kept, a fresh attempt is made, and the one that passes most is the result
(agent/attempts.py). Off by default (`spec_checks`): with the 1.5B model on HumanEval they cost 50% more
wall time for no gain (docs/eval.md); a stronger model writes better checks."""

from __future__ import annotations

import ast
import json
import re
import shlex
from typing import NamedTuple

from agent.examples import ModuleExamples

MOST_CHECKS = 6
ASSERT_LINE = re.compile(r"^\s*(assert .+?)\s*$", re.M)
# Runs each assert (argv[1]: {"modules": [...], "asserts": [...]}) with the modules' names in scope, printing
# each failure with what the call returned.
RUNNER = r"""
import ast, json, sys
sys.path.insert(0, ".")
spec = json.loads(sys.argv[1])
names = {}
for module in spec["modules"]:
    names.update(vars(__import__(module, fromlist=["*"])))
failed = 0
for line in spec["asserts"]:
    try:
        exec(line, dict(names))
    except AssertionError:
        failed += 1
        test, got = ast.parse(line).body[0].test, ""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            try:
                got = f" (it returned {eval(compile(ast.Expression(test.left), 'check', 'eval'), dict(names))!r})"
            except Exception:
                pass
        print(f"FAILED: {line}{got}")
    except Exception as exc:
        failed += 1
        print(f"FAILED: {line} ({type(exc).__name__}: {exc})")
print(f"{len(spec['asserts']) - failed} of {len(spec['asserts'])} checks pass")
sys.exit(1 if failed else 0)
"""


def parse(reply: str) -> list[str]:
    """The reply's assert statements (one per line, wherever they are written), those that compile."""
    found: list[str] = []
    for line in ASSERT_LINE.findall(reply):
        try:
            tree = ast.parse(line)
        except (SyntaxError, ValueError):
            continue
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert) and line not in found:
            found.append(line)
    return found[:MOST_CHECKS]


class Score(NamedTuple):
    examples_pass: bool  # the stubs' docstring examples too: a finish let through failing them ranks last
    passed: int
    total: int
    failures: tuple[str, ...]  # each failing check with what the call returned: how the code behaves

    @property
    def perfect(self) -> bool:
        return self.examples_pass and self.passed == self.total


def score(output: str, total: int, examples_pass: bool = True) -> Score:
    """What the runner's output says: how many passed (0 when it never got to the end: the code did not
    load, or ran past its time) and the failures."""
    found = re.findall(r"^(\d+) of \d+ checks pass$", output, re.M)
    failures = tuple(line for line in output.splitlines() if line.startswith("FAILED: "))
    failures = failures if found else ("(did not run to the end)",)
    return Score(examples_pass, int(found[-1]) if found else 0, total, failures)


def command(asserts: list[str], modules: list[ModuleExamples], python: str = "python") -> str | None:
    """One command running the asserts against the modules as they are now; None without asserts."""
    if not asserts or not modules:
        return None
    names = [m.path.removesuffix(".py").replace("/", ".") for m in modules]
    spec = json.dumps({"modules": names, "asserts": asserts})
    return f"{python} -c {shlex.quote(RUNNER)} {shlex.quote(spec)}"
