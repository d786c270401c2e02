"""What the task's stub files gave (agent/strategies/given_code.py), and the finish gate that keeps it, on real files."""

from __future__ import annotations

from pathlib import Path

from agent.checks.finish import DOCTEST_REFUSALS, FinishGate
from agent.settings.config import Config
from agent.strategies import given_code

CYCLIC = '''def encode_cyclic(s: str) -> str:
    """Rotate each group of three characters left by one."""
    groups = [s[i : i + 3] for i in range(0, len(s), 3)]
    return "".join(g[1:] + g[0] if len(g) == 3 else g for g in groups)


def decode_cyclic(s: str) -> str:
    """Takes a string encoded with encode_cyclic and returns it decoded."""
    raise NotImplementedError
'''
TASK = "Implement the function `decode_cyclic` in solution.py so that it does what its docstring says."
DECODE = '''def decode_cyclic(s: str) -> str:
    """Takes a string encoded with encode_cyclic and returns it decoded."""
    groups = [s[i : i + 3] for i in range(0, len(s), 3)]
    return "".join(g[-1] + g[:-1] if len(g) == 3 else g for g in groups)
'''


def armed(workspace: Path, task: str) -> FinishGate:
    """The finish gate as a run on `task` starts it: armed with the stubs the task names."""
    gate = FinishGate(workspace, Config(), task=task)
    gate.stub_files = given_code.stub_files(workspace, task)
    return gate


def test_top_level_names_are_functions_and_classes_not_methods():
    assert given_code.top_level_names("import os\n\nclass A:\n    def m(self): ...\n\ndef f(): ...\n") == {"A", "f"}
    assert given_code.top_level_names("def f(:\n") == set()


def test_only_files_with_a_stub_are_kept(tmp_path):
    (tmp_path / "solution.py").write_text(CYCLIC)
    (tmp_path / "done.py").write_text("def g():\n    return 1\n")
    given = given_code.stub_files(tmp_path, TASK)
    assert list(given) == ["solution.py"] and given["solution.py"].defined == {"encode_cyclic", "decode_cyclic"}
    assert given["solution.py"].stubs == {"decode_cyclic"}


def test_stubs_the_task_does_not_name_are_not_its_to_fill_in(tmp_path):
    (tmp_path / "shapes.py").write_text("class Shape:\n    def area(self):\n        raise NotImplementedError\n")
    (tmp_path / "solution.py").write_text(CYCLIC)
    assert list(given_code.stub_files(tmp_path, TASK)) == ["solution.py"]
    assert given_code.stub_files(tmp_path, "Rename Shape to Form") == {}
    assert armed(tmp_path, "Add a docstring to shapes.py")() is None


def test_a_finish_that_drops_a_function_the_task_gave_is_refused_as_a_wrong_value_is(tmp_path):
    """HumanEval/38: the loop finished with only decode_cyclic; the task's check calls encode_cyclic. A task
    may ask to remove or rename one, so `finish` is refused DOCTEST_REFUSALS times, a one-shot answer always."""
    (tmp_path / "solution.py").write_text(CYCLIC)
    gate = armed(tmp_path, TASK)
    (tmp_path / "solution.py").write_text(DECODE)
    verdicts = [gate() for _ in range(DOCTEST_REFUSALS + 1)]
    assert all(v and "solution.py: encode_cyclic" in v and "keep them" in v for v in verdicts[:-1])
    assert verdicts[-1] is None and gate.verdict() is not None
    (tmp_path / "solution.py").write_text(CYCLIC.split("def decode_cyclic")[0] + DECODE)
    assert gate.verdict() is None


def test_a_finish_that_leaves_a_given_stub_a_stub_is_refused(tmp_path):
    """HumanEval/38 again: told encode_cyclic was gone, the model put the file back as given, stub and all."""
    (tmp_path / "solution.py").write_text(CYCLIC)
    gate = armed(tmp_path, TASK)
    verdict = gate()
    assert (
        verdict and "Still stubs" in verdict and "solution.py: decode_cyclic" in verdict and "no longer" not in verdict
    )
    (tmp_path / "solution.py").write_text(DECODE)
    verdict = gate()
    assert verdict and "solution.py: encode_cyclic" in verdict and "Still stubs" not in verdict


def test_a_project_with_tests_is_judged_by_its_tests(tmp_path):
    (tmp_path / "solution.py").write_text(CYCLIC)
    (tmp_path / "test_solution.py").write_text("def test_nothing():\n    assert True\n")
    gate = armed(tmp_path, TASK)
    (tmp_path / "solution.py").write_text(DECODE)
    assert gate() is None
