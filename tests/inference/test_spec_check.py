"""The speculative-run verdicts: a broken draft path that looks fast must fail."""

from __future__ import annotations

import json

import pytest

from inference import spec_check
from inference.bench import BenchReport, Sample

GOOD = "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(1, 2) == 3\n" * 8


def sample(target: str, text: str, drafted: int | None = None, accepted: int | None = None) -> Sample:
    return Sample(
        target=target,
        workload="w",
        turn=0,
        repeat=0,
        text=text,
        tool_calls=0,
        prompt_tokens=10,
        cached_prompt_tokens=0,
        completion_tokens=100,
        prompt_ms=10,
        predicted_ms=1000,
        ttft_ms=5,
        wall_ms=1000,
        draft_n=drafted,
        draft_accepted=accepted,
    )


def report(*samples: Sample, temperature: float = 0.0) -> BenchReport:
    made = BenchReport(baseline="base", temperature=temperature, repeat=1, samples=list(samples))
    made.summarize()
    return made


def by_target(results):
    return {v.target: v for v in results}


def test_a_working_draft_path_passes():
    results = by_target(spec_check.verdicts(report(sample("base", GOOD), sample("spec", GOOD, 80, 60)), {}, 0.3))
    assert results["spec"].ok and results["spec"].agreement_chars is None
    assert results["base"].ok


def test_the_slash_failure_fails_despite_its_acceptance():
    broken = "def add(a, b):\n" + "/" * 400
    results = by_target(spec_check.verdicts(report(sample("base", GOOD), sample("spec", broken, 100, 99)), {}, 0.3))
    problems = " ".join(results["spec"].problems)
    assert (
        not results["spec"].ok and "degenerate text: '/' repeated" in problems and "parts from the baseline" in problems
    )


@pytest.mark.parametrize(
    ("spec", "log", "expected"),
    [
        (sample("spec", GOOD), "", "no tokens drafted"),
        (sample("spec", GOOD, 100, 10), "", "acceptance 10% below the floor 30%"),
        (sample("spec", GOOD, 100, 80), "srv: invalid reduced-logits token -1\n", "error line(s) in its log"),
        (sample("spec", GOOD, 100, 80), "GGML_ASSERT(n > 0) failed\n", "error line(s) in its log"),
    ],
)
def test_each_failure_is_named(spec, log, expected):
    results = by_target(spec_check.verdicts(report(sample("base", GOOD), spec), {"spec": log}, 0.3))
    assert not results["spec"].ok and expected in " ".join(results["spec"].problems)


def test_a_late_greedy_divergence_is_reported_not_failed():
    later = GOOD[:300] + "# a different ending\n"
    results = by_target(spec_check.verdicts(report(sample("base", GOOD), sample("spec", later, 80, 60)), {}, 0.3))
    assert results["spec"].ok and results["spec"].agreement_chars == 300


def test_sampled_output_cannot_be_compared():
    results = by_target(
        spec_check.verdicts(report(sample("base", GOOD), sample("spec", GOOD, 80, 60), temperature=0.7), {}, 0.3)
    )
    assert not results["spec"].ok and "run at 0" in results["spec"].problems[0]


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        "a = 1\n" + "-" * 40 + "\nb = 2\n" + "x = [0, 0, 0]\n" * 3,
        "    " * 50 + "x",
        "| name | value |\n|---|---|\n" + "".join(f"| k{i} | {i * i} |\n" for i in range(30)),
    ],
)
def test_ordinary_code_is_not_degenerate(text):
    assert spec_check.degenerate(text) is None


def test_one_long_token_repeated_is_degenerate():
    """BeeLlama v0.2.0's DFlash on a zero-weight Gemma 4 (docs/benchmarks.md): every draft accepted, and this."""
    text = "<unused32>" * 4 + "<unused6226>" * 60
    found = spec_check.degenerate(text) or ""
    assert "unused6226" in found and "repeated 60 times" in found


def test_the_command_line_exits_1_on_a_failure(tmp_path, capsys):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(report(sample("base", GOOD), sample("spec", "/" * 300, 100, 99)).model_dump()))
    log = tmp_path / "spec.log"
    log.write_text("ok\n")
    assert spec_check.main([str(path), "--log", f"spec={log}"]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert spec_check.main([str(tmp_path / "missing.json")]) == 2
