"""Names the task's stub files define (agent/given_names.py), and the finish gate that keeps them, on real files."""

from __future__ import annotations

from agent import given_names
from agent.checks import DOCTEST_REFUSALS, FinishGate
from agent.config import Config

CYCLIC = '''def encode_cyclic(s: str) -> str:
    """Rotate each group of three characters left by one."""
    groups = [s[i : i + 3] for i in range(0, len(s), 3)]
    return "".join(g[1:] + g[0] if len(g) == 3 else g for g in groups)


def decode_cyclic(s: str) -> str:
    """Takes a string encoded with encode_cyclic and returns it decoded."""
    raise NotImplementedError
'''
DECODE = '''def decode_cyclic(s: str) -> str:
    """Takes a string encoded with encode_cyclic and returns it decoded."""
    groups = [s[i : i + 3] for i in range(0, len(s), 3)]
    return "".join(g[-1] + g[:-1] if len(g) == 3 else g for g in groups)
'''


def test_top_level_names_are_functions_and_classes_not_methods():
    assert given_names.top_level_names("import os\n\nclass A:\n    def m(self): ...\n\ndef f(): ...\n") == {"A", "f"}
    assert given_names.top_level_names("def f(:\n") == set()


def test_only_files_with_a_stub_are_kept(tmp_path):
    (tmp_path / "solution.py").write_text(CYCLIC)
    (tmp_path / "done.py").write_text("def g():\n    return 1\n")
    assert given_names.stub_files(tmp_path) == {"solution.py": {"encode_cyclic", "decode_cyclic"}}


def test_a_finish_that_drops_a_function_the_task_gave_is_refused_as_a_wrong_value_is(tmp_path):
    """HumanEval/38: the loop finished with only decode_cyclic; the task's check calls encode_cyclic. A task
    may ask to remove or rename one, so `finish` is refused DOCTEST_REFUSALS times, a one-shot answer always."""
    (tmp_path / "solution.py").write_text(CYCLIC)
    gate = FinishGate(tmp_path, Config())
    (tmp_path / "solution.py").write_text(DECODE)
    verdicts = [gate() for _ in range(DOCTEST_REFUSALS + 1)]
    assert all(v and "solution.py: encode_cyclic" in v and "put them back" in v for v in verdicts[:-1])
    assert verdicts[-1] is None and gate.verdict() is not None
    (tmp_path / "solution.py").write_text(CYCLIC.split("def decode_cyclic")[0] + DECODE)
    assert gate.verdict() is None


def test_a_project_with_tests_is_judged_by_its_tests(tmp_path):
    (tmp_path / "solution.py").write_text(CYCLIC)
    (tmp_path / "test_solution.py").write_text("def test_nothing():\n    assert True\n")
    gate = FinishGate(tmp_path, Config())
    (tmp_path / "solution.py").write_text(DECODE)
    assert gate() is None
