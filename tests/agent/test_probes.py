"""Probes (agent/probes.py): inputs made from the task's examples, run by real Python under the run's sandbox
on real files, tell right answers (which agree) from wrong ones that pass the examples too."""

from __future__ import annotations

from agent import probes
from agent.checks import FinishGate
from agent.config import Config
from agent.examples import collect

STUB = '''def median(values):
    """The middle value of `values` (the mean of the two middle ones for an even count).

    >>> median([3, 1, 2])
    2
    >>> median([4, 1, 3, 2])
    2.5
    """
    raise NotImplementedError


def clip(text, n):
    """The first n characters:
    clip("hello", 2) => "he"
    """
    raise NotImplementedError
'''
SORTED = "    ordered = sorted(values)\n    half = len(ordered) // 2\n    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2\n"
STATISTICS = "    import statistics\n    return statistics.median(values)\n"
# Passes both examples, but takes the mean for an even count.
MEAN_IF_EVEN = "    ordered = sorted(values)\n    return ordered[len(ordered) // 2] if len(ordered) % 2 else sum(values) / len(values)\n"


def module_with(body: str) -> str:
    return STUB.replace("    raise NotImplementedError\n", body, 1).replace(
        "    raise NotImplementedError\n", "    return text[:n]\n"
    )


def test_probes_change_one_argument_of_each_example_call_and_leave_out_the_examples(tmp_path):
    (tmp_path / "m.py").write_text(STUB)
    (module,) = collect(tmp_path)
    found = probes.probes(module)
    assert 0 < len(found) <= probes.MOST_PROBES
    calls = {(p.function, p.arguments) for p in found}
    assert ("median", "([3, 1, 2],)") not in calls and ("median", "([4, 1, 3, 2],)") not in calls
    assert ("median", "([2, 1, 3],)") in calls, "a list reversed"
    assert any(p.function == "clip" for p in found), "prose examples are probed too"
    assert ("clip", "('hello', 3)") in calls and ("clip", "('olleh', 2)") in calls


def test_variants_keep_the_type_and_change_the_value():
    assert probes.variants(True) == [False]
    assert 4 in probes.variants(3) and 3 not in probes.variants(3)
    assert all(isinstance(v, tuple) for v in probes.variants((1, 2)))
    assert "cba" in probes.variants("abc") and probes.variants(float("inf")) == []
    assert probes.variants({"a": 1, "b": 2})[0] == {"b": 2}
    assert probes.variants(None) == []


def test_right_answers_agree_and_one_that_only_passes_the_examples_does_not(tmp_path):
    behaviours = {}
    for name, body in {"sorted": SORTED, "statistics": STATISTICS, "mean_if_even": MEAN_IF_EVEN}.items():
        workspace = tmp_path / name
        workspace.mkdir()
        (workspace / "m.py").write_text(STUB)
        gate = FinishGate(workspace, Config())
        (workspace / "m.py").write_text(module_with(body))
        assert gate.verdict() is None, f"{name} passes the examples"
        behaviours[name] = probes.behaviour(gate, "m.py", probes.probes(gate.given[0]))
        assert behaviours[name] is not None
    assert probes.agree(behaviours["sorted"], behaviours["statistics"])
    assert not probes.agree(behaviours["sorted"], behaviours["mean_if_even"])
    assert not probes.agree(behaviours["statistics"], behaviours["mean_if_even"])


def test_an_answer_that_hangs_or_prints_or_exits_still_gets_a_behaviour(tmp_path):
    body = (
        "    print('noise')\n    if len(values) == 0:\n        raise SystemExit(3)\n    while len(values) == 1:\n        pass\n"
        + SORTED
    )
    (tmp_path / "m.py").write_text(STUB)
    gate = FinishGate(tmp_path, Config())
    (tmp_path / "m.py").write_text(module_with(body))
    chosen = probes.probes(gate.given[0])
    seen = probes.behaviour(gate, "m.py", chosen)
    assert seen is not None and len(seen) == len(chosen)
    empty = [i for i, p in enumerate(chosen) if p.arguments == "([],)"]
    single = [i for i, p in enumerate(chosen) if p.function == "median" and p.arguments.count(",") == 1]
    assert empty and all(seen[i] is None for i in empty), "an exit is no value"
    assert single and all(seen[i] is None for i in single), "an endless loop is cut at its second"


def test_a_module_that_does_not_import_has_no_behaviour(tmp_path):
    (tmp_path / "m.py").write_text(STUB)
    gate = FinishGate(tmp_path, Config())
    (tmp_path / "m.py").write_text("import not_a_module_anywhere\n")
    assert probes.behaviour(gate, "m.py", probes.probes(gate.given[0])) is None


def test_agreement_needs_values_on_half_the_probes_and_no_difference():
    assert probes.agree(["a", "b", None, "d"], ["a", "b", "c", None])
    assert not probes.agree(["a", "b", "c", "d"], ["a", "b", "c", "x"])
    assert not probes.agree([None, None, None, "d"], [None, None, None, "d"]), "raising everywhere agrees with nothing"
    assert not probes.agree([], [])


def test_the_runners_output_is_read_only_when_whole():
    assert probes.read_behaviour('noise\nPROBES ["ab", null]\n', 2) == ["ab", None]
    assert probes.read_behaviour('PROBES ["ab"]', 2) is None
    assert probes.read_behaviour("Traceback ...\nImportError", 1) is None
    assert probes.read_behaviour("PROBES [1, {}]", 2) == [None, None]
    assert probes.read_behaviour("PROBES [oops", 1) is None
