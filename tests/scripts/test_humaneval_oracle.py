"""scripts/humaneval_oracle.py reads one-shot answers from transcripts as the agent writes them and runs
HumanEval's real hidden tests on each, under the real sandbox: a right and a wrong answer to HumanEval/0."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "humaneval_oracle.py"
spec = importlib.util.spec_from_file_location("humaneval_oracle", SCRIPT)
assert spec and spec.loader
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

RIGHT = """def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])
"""
WRONG = """def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))
"""


def test_each_recorded_answer_is_checked_against_the_hidden_tests(tmp_path):
    events = [
        {"type": "start", "task": "Implement has_close_elements"},
        {"type": "one_shot", "number": 1, "text": f"```python\n{WRONG}```", "problem": None},
        {"type": "one_shot", "number": 2, "text": f"```python\n{RIGHT}```", "problem": "examples fail"},
        {"type": "one_shot", "number": 3, "text": "no code", "problem": "no code block in the reply"},
    ]
    (tmp_path / "20261203-081500-HumanEval-0-s1-abc123.jsonl").write_text("\n".join(map(json.dumps, events)))
    (tmp_path / "20261203-081600-proj-def456.jsonl").write_text(json.dumps(events[1]))
    answers = oracle.recorded_answers(tmp_path)
    assert list(answers) == ["HumanEval-0"] and len(answers["HumanEval-0"]) == 2
    verdicts = oracle.right_answers(answers, None)
    assert sorted(verdicts["HumanEval-0"]) == [(False, True), (True, False)], "(passed examples, right) per answer"
    assert oracle.right_answers(answers, {"HumanEval-1"}) == {}
