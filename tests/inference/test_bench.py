"""A shortened `agent bench` against the real engine: outputs exist, have the documented structure, and
their figures are consistent with each other."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli import app
from inference.bench import BenchReport, Sample

pytestmark = pytest.mark.model


def test_short_bench_produces_consistent_table_json_and_chart(engine, qwen_path, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--profiles",
            "qwen-cpu,qwen-cpu-ngram",
            "--workloads",
            "edit,agent",
            "--max-tokens",
            "32",
            "--out",
            str(tmp_path),
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| edit-turn | qwen-cpu-ngram |" in (tmp_path / "bench.md").read_text()
    data = json.loads((tmp_path / "bench.json").read_text())
    report = BenchReport.model_validate(data)
    assert {s.workload for s in report.samples} == {
        "edit-turn",
        "write-file-text",
        "write-file-native",
        "agent-session",
    }
    assert {s.target for s in report.samples} == {"qwen-cpu", "qwen-cpu-ngram"}
    for raw, sample in zip(data["samples"], report.samples):
        assert 0 < sample.completion_tokens <= 32
        assert raw["tokens_per_second"] == pytest.approx(sample.completion_tokens / (sample.predicted_ms / 1000))
        assert sample.cached_prompt_tokens <= sample.prompt_tokens
        if sample.draft_n is not None:
            assert 0 <= sample.draft_accepted <= sample.draft_n
        if sample.target == "qwen-cpu":
            assert sample.draft_n is None
    session = [s for s in report.samples if s.workload == "agent-session" and s.target == "qwen-cpu"]
    assert len(session) == 4 and all(s.cached_prompt_tokens > 0.8 * s.prompt_tokens for s in session[1:])
    rows = {(r.workload, r.target): r for r in report.rows}
    assert rows[("agent-session", "qwen-cpu")].history_reprocessed <= 3, "token-exact history: at most 1 per turn"
    for workload in ("edit-turn", "agent-session"):
        base, ngram = rows[(workload, "qwen-cpu")], rows[(workload, "qwen-cpu-ngram")]
        assert base.speedup is None and ngram.speedup == pytest.approx(
            ngram.tokens_per_second / base.tokens_per_second, rel=0.01
        )
        assert ngram.matches_baseline in (True, False)
    assert rows[("edit-turn", "qwen-cpu-ngram")].drafted, "re-emitting a file must give the n-gram drafter material"


def test_summary_arithmetic_on_known_samples():
    def sample(target, tokens, ms, drafted=None, accepted=None, text="x"):
        return Sample(
            target=target,
            workload="w",
            turn=0,
            repeat=0,
            text=text,
            tool_calls=0,
            prompt_tokens=10,
            cached_prompt_tokens=0,
            completion_tokens=tokens,
            prompt_ms=100,
            predicted_ms=ms,
            ttft_ms=120,
            wall_ms=ms + 100,
            draft_n=drafted,
            draft_accepted=accepted,
        )

    report = BenchReport(
        baseline="base",
        temperature=0,
        repeat=1,
        samples=[sample("base", 100, 4000), sample("spec", 100, 2000, 80, 60, text="y")],
    )
    report.summarize()
    base, spec = report.rows
    assert (base.tokens_per_second, spec.tokens_per_second, spec.speedup) == (25.0, 50.0, 2.0)
    assert (spec.acceptance, spec.accepted_share, spec.matches_baseline) == (0.75, 0.6, False)


def test_history_reprocessed_counts_what_the_cache_lost():
    def turn(n, prompt, cached, completion):
        return Sample(
            target="t",
            workload="w",
            turn=n,
            repeat=0,
            text="",
            tool_calls=0,
            prompt_tokens=prompt,
            cached_prompt_tokens=cached,
            completion_tokens=completion,
            prompt_ms=1,
            predicted_ms=1,
            ttft_ms=1,
            wall_ms=1,
            draft_n=None,
            draft_accepted=None,
        )

    # turn 1 adds 1000 - 800 - 150 = 50 tokens but processed 90: 40 tokens of history were lost
    report = BenchReport(
        baseline="t",
        temperature=0,
        repeat=1,
        samples=[turn(0, 800, 0, 150), turn(1, 1000, 910, 20), turn(2, 1100, 1050, 5)],
    )
    report.summarize()
    assert report.rows[0].history_reprocessed == 40  # turn 2 added 80 and processed 50: nothing lost


def test_speedup_range_pairs_each_round_with_the_baselines_same_round():
    def sample(target, repeat, ms):
        return Sample(
            target=target,
            workload="w",
            turn=0,
            repeat=repeat,
            text="",
            tool_calls=0,
            prompt_tokens=1,
            cached_prompt_tokens=0,
            completion_tokens=100,
            prompt_ms=1,
            predicted_ms=ms,
            ttft_ms=1,
            wall_ms=ms,
            draft_n=None,
            draft_accepted=None,
        )

    # round 0 is slow for both (machine drift): paired, the speedups are 1.0 and 2.0
    report = BenchReport(
        baseline="base",
        temperature=0,
        repeat=2,
        samples=[sample("base", 0, 4000), sample("spec", 0, 4000), sample("base", 1, 2000), sample("spec", 1, 1000)],
    )
    report.summarize()
    base, spec = report.rows
    assert base.speedup_range is None and spec.speedup_range == (1.0, 2.0)
    assert "| w | spec | 62.5 | 1.50x (1.00-2.00) |" in report.markdown()


def test_targets_up_together_take_turns_in_an_order_rotated_every_round():
    from inference.backends.backend import Completion, Message, Timings
    from inference.bench import Target, Workload, run_bench

    order: list[str] = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def complete(self, messages, tools=None, sampling=None, on_text=None):
            order.append(self.name)
            return Completion(text="x", timings=Timings(prompt_tokens=5, completion_tokens=10, predicted_ms=100))

    group = [(Target(name=n, profile=n), Recorder(n)) for n in ("a", "b", "c")]
    workload = Workload(id="w", kind="code", turns=[[Message(role="user", content="hi")]])
    report = run_bench([group], [workload], repeat=3, temperature=0, baseline="a")
    assert order[:3] == ["a", "b", "c"]  # one warm-up each
    assert order[3:] == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert [r.speedup for r in report.rows] == [None, 1.0, 1.0]
