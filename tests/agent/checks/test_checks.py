"""The finish gate on real files, with the examples run by real doctest under the run's sandbox."""

from __future__ import annotations

from agent.checks.finish import DOCTEST_REFUSALS, FinishGate
from agent.settings.config import Config
from agent.strategies import examples

STUB = '''from typing import List


def depths(text: str) -> List[int]:
    """The deepest nesting of each group.

    >>> depths('(()) ()')
    [2, 1]
    """
    raise NotImplementedError
'''


def test_examples_that_give_another_value_refuse_finish_only_so_often(tmp_path):
    """The task's examples may be wrong (HumanEval/116's are): a different value holds `finish` up
    DOCTEST_REFUSALS times, then lets it through; a one-shot answer's check (no budget) always refuses."""
    (tmp_path / "solution.py").write_text(STUB)
    gate = FinishGate(tmp_path, Config())
    gate.given = examples.collect(tmp_path)  # as the example checks arm it for a task that names the stub
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", "return [2, 2]"))
    verdicts = [gate() for _ in range(DOCTEST_REFUSALS + 1)]
    assert all(v and "Expected:\n    [2, 1]\nGot:\n    [2, 2]" in v for v in verdicts[:-1]) and verdicts[-1] is None
    assert gate.verdict() is not None, "without the budget, still refused"
    gate.new_attempt()
    assert gate() is not None, "a new attempt is refused as often again"


def test_code_that_raises_or_does_not_import_is_refused_every_time(tmp_path):
    """HumanEval/6's run ended `finished` on a module without `from typing import List`: a crash is never a
    wrong example, so it never wears the budget out."""
    (tmp_path / "solution.py").write_text(STUB)
    gate = FinishGate(tmp_path, Config())
    gate.given = examples.collect(tmp_path)  # as the example checks arm it for a task that names the stub
    (tmp_path / "solution.py").write_text(STUB.replace("from typing import List\n", ""))
    verdicts = [gate() for _ in range(DOCTEST_REFUSALS + 2)]
    assert all(v and "NameError: name 'List' is not defined" in v for v in verdicts)
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", "return text[50]"))
    assert "IndexError" in (gate() or "")
    right = "return [max(g[: i + 1].count('(') - g[: i + 1].count(')') for i in range(len(g))) for g in text.split()]"
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", right))
    assert gate() is None
