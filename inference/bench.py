"""`agent bench`: baseline vs speculative profiles, side by side, from one run.

A workload is one or more turns sent to every target; multi-turn workloads append the model's own reply
between turns (as an agent does), so prompt-cache reuse is measured the way an agent session sees it.
Every raw figure goes to JSON; the summary is a Markdown table and a PNG chart.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from inference.backends.backend import Message, Sampling
from inference.backends.endpoint import EndpointBackend

SEED_PROMPTS = {
    "task-store": "Write a complete Python task store module. Include a Task dataclass, TaskStatus enum, TaskStore class, add_task, update_task, delete_task, search_tasks, filter_by_status, export_to_json, get_all_tasks, and 5 tests. Return only one complete Python file.",
    "kv-report": "Write a complete Python key-value report module. Include a KeyValueStore class, set, get, delete, exists, list_keys, filter_by_prefix, export_to_json, load_from_json, and a generate_report function that returns total keys, empty values, prefix counts, and largest value length. Include 5 tests. Return only one complete Python file.",
    "linked-list": "Write a complete Python doubly linked list module. Include a Node dataclass, DoublyLinkedList class, append, prepend, delete, find, reverse, to_list, from_list, clear, and 5 tests. Return only one complete Python file.",
    "prose-moe": "Write a blog post explaining Mixture of Experts in large language models: how routing works, why it makes inference cheaper, and its trade-offs.",
}

EDIT_SOURCE = (Path(__file__).parent / "bench_data" / "inventory.py").read_text()
EDIT_PROMPT = (
    "Here is inventory.py:\n```python\n" + EDIT_SOURCE + "```\n"
    "Rename the method `total_value` to `inventory_value` (and every call to it). "
    "Return the complete updated file and nothing else."
)


class Workload(BaseModel):
    id: str
    kind: Literal["code", "prose", "edit", "agent"]
    turns: list[list[Message]]  # turn 1 is the whole opening; later turns are appended after each reply
    tools: list[dict[str, Any]] | None = None
    max_tokens: int = 1200


def seed_workloads(max_tokens: int = 1200) -> list[Workload]:
    workloads = [
        Workload(
            id=k,
            kind="prose" if k.startswith("prose") else "code",
            max_tokens=max_tokens,
            turns=[[Message(role="user", content=v)]],
        )
        for k, v in SEED_PROMPTS.items()
    ]
    workloads.append(
        Workload(
            id="edit-turn", kind="edit", max_tokens=max_tokens, turns=[[Message(role="user", content=EDIT_PROMPT)]]
        )
    )
    return workloads


class Target(BaseModel):
    """One column of the comparison: a profile (started for the run) or a running endpoint."""

    name: str
    profile: str | None = None
    endpoint: str | None = None


class Sample(BaseModel):
    target: str
    workload: str
    turn: int
    repeat: int
    text: str
    tool_calls: int
    prompt_tokens: int
    cached_prompt_tokens: int
    completion_tokens: int
    prompt_ms: float
    predicted_ms: float
    ttft_ms: float
    wall_ms: float
    draft_n: int | None
    draft_accepted: int | None

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / (self.predicted_ms / 1000) if self.predicted_ms else 0.0

    @property
    def prompt_per_second(self) -> float:
        processed = self.prompt_tokens - self.cached_prompt_tokens
        return processed / (self.prompt_ms / 1000) if self.prompt_ms and processed > 0 else 0.0


class Row(BaseModel):
    """One (workload, target) cell of the summary, medians over repeats."""

    workload: str
    target: str
    tokens_per_second: float
    speedup: float | None  # median over rounds of (this round's rate / the baseline's in the same round)
    speedup_range: tuple[float, float] | None = None  # lowest and highest per-round speedup
    drafted: int | None
    accepted: int | None
    acceptance: float | None  # accepted / drafted
    accepted_share: float | None  # accepted / generated
    prompt_per_second: float
    ttft_ms: float
    cached_share: float  # prompt tokens from cache, turns after the first
    history_reprocessed: float | None  # per round: tokens of earlier turns processed again (0-1 with exact history)
    wall_s: float
    matches_baseline: bool | None


class BenchReport(BaseModel):
    baseline: str
    temperature: float
    repeat: int
    samples: list[Sample] = Field(default_factory=list)
    rows: list[Row] = Field(default_factory=list)
    machine: dict[str, Any] = Field(default_factory=dict)

    def summarize(self) -> None:
        self.rows = []
        workloads = list(dict.fromkeys(s.workload for s in self.samples))
        targets = list(dict.fromkeys(s.target for s in self.samples))
        for workload in workloads:
            for target in targets:
                mine = [s for s in self.samples if s.workload == workload and s.target == target]
                if not mine:
                    continue
                rate = self._median_rate(workload, target)
                drafted = sum(s.draft_n or 0 for s in mine)
                accepted = sum(s.draft_accepted or 0 for s in mine)
                generated = sum(s.completion_tokens for s in mine)
                later = [s for s in mine if s.turn > 0]
                later_prompt = sum(s.prompt_tokens for s in later)
                self.rows.append(
                    Row(
                        workload=workload,
                        target=target,
                        tokens_per_second=round(rate, 2),
                        speedup=self._speedup(workload, target),
                        speedup_range=self._speedup_range(workload, target),
                        drafted=drafted if drafted else None,
                        accepted=accepted if drafted else None,
                        acceptance=round(accepted / drafted, 3) if drafted else None,
                        accepted_share=round(accepted / generated, 3) if drafted and generated else None,
                        prompt_per_second=round(statistics.median(s.prompt_per_second for s in mine), 1),
                        ttft_ms=round(statistics.median(s.ttft_ms for s in mine), 1),
                        cached_share=round(sum(s.cached_prompt_tokens for s in later) / later_prompt, 3)
                        if later_prompt
                        else 0.0,
                        history_reprocessed=reprocessed(mine) / max(1, self.repeat) if later else None,
                        wall_s=round(sum(s.wall_ms for s in mine) / 1000 / max(1, self.repeat), 2),
                        matches_baseline=self._matches(workload, target),
                    )
                )

    def _median_rate(self, workload: str, target: str) -> float:
        rates = list(self._rates(workload, target).values())
        return statistics.median(rates) if rates else 0.0

    def _rates(self, workload: str, target: str) -> dict[int, float]:
        """Tokens over seconds summed over a round's turns, per round."""
        per_repeat: dict[int, tuple[int, float]] = {}
        for s in self.samples:
            if s.workload == workload and s.target == target:
                tokens, ms = per_repeat.get(s.repeat, (0, 0.0))
                per_repeat[s.repeat] = (tokens + s.completion_tokens, ms + s.predicted_ms)
        return {r: t / (ms / 1000) for r, (t, ms) in per_repeat.items() if ms > 0}

    def _paired_speedups(self, workload: str, target: str) -> list[float]:
        """Each round's rate over the baseline's in the same round, so drift between rounds cancels out."""
        mine, base = self._rates(workload, target), self._rates(workload, self.baseline)
        return [mine[r] / base[r] for r in mine if base.get(r)] if target != self.baseline else []

    def _speedup(self, workload: str, target: str) -> float | None:
        ratios = self._paired_speedups(workload, target)
        return round(statistics.median(ratios), 3) if ratios else None

    def _speedup_range(self, workload: str, target: str) -> tuple[float, float] | None:
        """The lowest and highest per-round speedup: how much of a difference is noise."""
        ratios = self._paired_speedups(workload, target)
        return (round(min(ratios), 3), round(max(ratios), 3)) if len(ratios) > 1 else None

    def _matches(self, workload: str, target: str) -> bool | None:
        if target == self.baseline or self.temperature > 0:
            return None

        def texts(name: str) -> list[str]:
            return [s.text for s in self.samples if s.workload == workload and s.target == name and s.repeat == 0]

        return texts(target) == texts(self.baseline)

    def markdown(self) -> str:
        header = (
            "| workload | target | tok/s | speedup (per-round range) | drafted | accepted | accepted/drafted | accepted/generated "
            "| prompt tok/s | TTFT ms | cached (later turns) | history re-processed | wall s | = baseline |"
        )
        lines = [header, "|" + "---|" * 14]
        for r in self.rows:
            cells = [
                r.workload,
                r.target,
                f"{r.tokens_per_second:.1f}",
                _speedup(r),
                _fmt(r.drafted),
                _fmt(r.accepted),
                _fmt(r.acceptance, "{:.0%}"),
                _fmt(r.accepted_share, "{:.0%}"),
                f"{r.prompt_per_second:.0f}",
                f"{r.ttft_ms:.0f}",
                f"{r.cached_share:.0%}" if r.cached_share else "-",
                _fmt(r.history_reprocessed, "{:.0f}"),
                f"{r.wall_s:.1f}",
                {True: "yes", False: "no", None: "-"}[r.matches_baseline],
            ]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def chart(self, path: Path) -> None:
        from inference.extras import pyplot

        plt = pyplot()

        workloads = list(dict.fromkeys(r.workload for r in self.rows))
        targets = list(dict.fromkeys(r.target for r in self.rows))
        width = 0.8 / max(1, len(targets))
        fig, ax = plt.subplots(figsize=(min(14, max(8, 0.8 * len(workloads) * max(1, len(targets)))), 5))
        for i, target in enumerate(targets):
            xs, ys, labels = [], [], []
            for j, workload in enumerate(workloads):
                row = next((r for r in self.rows if r.workload == workload and r.target == target), None)
                if row:
                    xs.append(j + i * width)
                    ys.append(row.tokens_per_second)
                    labels.append("" if row.speedup is None else f"{row.speedup:.2f}x")
            bars = ax.bar(xs, ys, width, label=target)
            ax.bar_label(bars, labels=labels, fontsize=8, padding=2)
        ax.set_xticks([j + width * (len(targets) - 1) / 2 for j in range(len(workloads))], workloads, rotation=15)
        ax.set_ylabel("generated tokens / second")
        ax.set_title(f"baseline {self.baseline} vs speculative profiles (temperature {self.temperature})")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)

    def save(self, folder: Path) -> dict[str, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"json": folder / "bench.json", "markdown": folder / "bench.md", "chart": folder / "bench.png"}
        data = self.model_dump()
        data["samples"] = [dict(s.model_dump(), tokens_per_second=s.tokens_per_second) for s in self.samples]
        paths["json"].write_text(json.dumps(data, indent=2))
        paths["markdown"].write_text(self.markdown() + "\n")
        self.chart(paths["chart"])
        return paths


def reprocessed(samples: list[Sample]) -> int:
    """Prompt tokens processed beyond what each turn added: the part of the history the cache lost."""
    total = 0
    by_turn = {(s.repeat, s.turn): s for s in samples}
    for (round_, turn), s in by_turn.items():
        before = by_turn.get((round_, turn - 1))
        if before:
            added = s.prompt_tokens - before.prompt_tokens - before.completion_tokens
            total += max(0, s.prompt_tokens - s.cached_prompt_tokens - added)
    return total


def _speedup(row: Row) -> str:
    if row.speedup is None:
        return "-"
    spread = f" ({row.speedup_range[0]:.2f}-{row.speedup_range[1]:.2f})" if row.speedup_range else ""
    return f"{row.speedup:.2f}x{spread}"


def _fmt(value: Any, pattern: str = "{}") -> str:
    return "-" if value is None else pattern.format(value)


def _first_token(seen: list[float], _text: str) -> None:
    """`on_text` that records when the first piece of the reply arrived."""
    if not seen:
        seen.append(time.perf_counter())


def run_workload(
    backend: EndpointBackend, workload: Workload, target: str, repeat: int, sampling: Sampling
) -> Iterator[Sample]:
    """Send each turn, appending the model's reply before the next one; one Sample per turn."""
    messages: list[Message] = []
    for turn, additions in enumerate(workload.turns):
        messages += additions
        started = time.perf_counter()
        first: list[float] = []
        completion = backend.complete(
            messages,
            workload.tools,
            sampling.model_copy(update={"max_tokens": workload.max_tokens}),
            on_text=partial(_first_token, first),
        )
        ended = time.perf_counter()
        t = completion.timings
        yield Sample(
            target=target,
            workload=workload.id,
            turn=turn,
            repeat=repeat,
            text=completion.text,
            tool_calls=len(completion.tool_calls),
            prompt_tokens=t.prompt_tokens,
            cached_prompt_tokens=t.cached_prompt_tokens,
            completion_tokens=t.completion_tokens,
            prompt_ms=t.prompt_ms,
            predicted_ms=t.predicted_ms,
            ttft_ms=((first[0] if first else ended) - started) * 1000,
            wall_ms=(ended - started) * 1000,
            draft_n=t.draft_n,
            draft_accepted=t.draft_accepted,
        )
        messages.append(completion.as_message())


Group = list[tuple[Target, EndpointBackend]]


def run_bench(
    groups: Iterable[Group],
    workloads: list[Workload],
    *,
    repeat: int,
    temperature: float,
    baseline: str,
    on_sample: Callable[[Sample], None] | None = None,
) -> BenchReport:
    """Each group's targets are up at the same time (idle servers cost memory, not compute) and take turns
    request by request, in an order rotated every round, so drift in machine speed hits them alike. One group
    per target (servers started one after another) is the fall-back when they do not fit together.
    Each target gets a warm-up request first; rounds are outermost."""
    report = BenchReport(baseline=baseline, temperature=temperature, repeat=repeat)
    sampling = Sampling(temperature=temperature, seed=1)
    for group in groups:
        for _target, backend in group:
            backend.complete([Message(role="user", content="Say OK.")], sampling=Sampling(max_tokens=4, temperature=0))
        for round_ in range(repeat):
            for workload in workloads:
                for target, backend in rotated(group, round_):
                    for sample in run_workload(backend, workload, target.name, round_, sampling):
                        report.samples.append(sample)
                        if on_sample:
                            on_sample(sample)
    report.summarize()
    return report


def rotated(items: list, by: int) -> list:
    by %= max(1, len(items))
    return items[by:] + items[:by]
