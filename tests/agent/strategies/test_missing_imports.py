"""Missing standard-library imports added to a model's answer (agent/strategies/missing_imports.py): real Python parsed and,
where it matters, run."""

from __future__ import annotations

import subprocess
import sys

from agent.strategies.missing_imports import add_missing_imports


def test_a_module_used_by_attribute_gets_its_import_and_then_runs(tmp_path):
    code = 'def f(n):\n    """Factorials."""\n    return [math.factorial(i) for i in range(n)]\n\nprint(f(4))\n'
    fixed = add_missing_imports(code)
    assert fixed == "import math\n" + code
    (tmp_path / "f.py").write_text(fixed)
    run = subprocess.run([sys.executable, str(tmp_path / "f.py")], capture_output=True, text=True)
    assert run.stdout.strip() == "[1, 1, 2, 6]", run.stderr


def test_bare_names_come_from_typing_math_functools_after_the_docstring_and_future_imports():
    code = (
        '"""Mod."""\nfrom __future__ import annotations\n\n'
        "def f(xs: List[int]) -> int:\n    return factorial(len(xs)) + reduce(lambda a, b: a + b, xs)\n"
    )
    fixed = add_missing_imports(code)
    head = '"""Mod."""\nfrom __future__ import annotations\n'
    imports = "from typing import List\nfrom math import factorial\nfrom functools import reduce\n"
    assert fixed == head + imports + code[len(head) :]
    namespace: dict = {}
    exec(compile(fixed, "m", "exec"), namespace)
    assert namespace["f"]([1, 2]) == 5


def test_names_the_code_binds_itself_are_never_imported():
    """A parameter, a local, a def, an except name, a comprehension variable and an import all bind a name; so
    does a `*` import (anything could come from it). Unknown names that no module offers stay as they are."""
    code = (
        "import collections as c\n"
        "def gcd(a, b):\n    return a\n"
        "def f(floor, xs):\n"
        "    deque = [x for x in xs]\n"
        "    try:\n        pass\n    except ValueError as Counter:\n        raise Counter\n"
        "    return gcd(floor, 1) + len(deque) + c.Counter(xs)[0] + no_such_helper(xs)\n"
    )
    assert add_missing_imports(code) == code
    effects = "def f(x):\n    return this + antigravity\n"  # importing them prints, or opens a browser
    assert add_missing_imports(effects) == effects
    starred = "from math import *\ndef f(x):\n    return sqrt(x) + heappush\n"
    assert add_missing_imports(starred) == starred


def test_code_that_does_not_parse_is_left_alone():
    assert add_missing_imports("def f(:\n    math.pi\n") == "def f(:\n    math.pi\n"
