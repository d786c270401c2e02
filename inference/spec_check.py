"""Is speculative decoding really working? Verdicts on a temperature-0 bench run of a baseline and speculative
profiles, plus their server logs.

A broken draft path can look like a triumph: BeeLlama's reduced-logits failure (its issue #27) prints `/////`
at near-100% acceptance and a huge speedup. So a speed figure alone proves nothing; each speculative target
must also (1) agree with the baseline's greedy text for a good stretch (greedy outputs may part later, once
batched verification rounds differently: that point is reported, not failed), (2) not be degenerate text,
(3) have drafted tokens and an acceptance above a floor, (4) have no draft error line in its log.

    python -m inference.spec_check BENCH_JSON [--log TARGET=PATH ...] [--floor 0.3]

exits 1 when any verdict fails, and prints one line per (workload, target).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from pydantic import BaseModel

from inference.bench import BenchReport

# Lines a failing draft path writes (llama.cpp upstream and BeeLlama): asserts, CUDA errors, DFlash/MTP errors.
ERROR_PATTERNS = [
    r"invalid reduced-logits token",
    r"GGML_ASSERT",
    r"CUDA error",
    r"\b(dflash|draft|mtp|speculative)\b.*\b(error|failed|invalid)\b",
]
MIN_AGREEMENT_CHARS = 200  # greedy texts must agree at least this far (or over a quarter of the baseline's text)


class Verdict(BaseModel):
    workload: str
    target: str
    ok: bool
    problems: list[str]
    agreement_chars: int | None  # the common prefix with the baseline's text (None: identical)
    acceptance: float | None


def degenerate(text: str) -> str | None:
    """What makes `text` degenerate, or None: one short unit (1-16 characters: one token's text, `/` or
    `<unused32>`) repeated over much of it, or a long run of one unit at its end (where a broken draft path ends
    up). A ruler line in code is neither."""
    stripped = text.strip()
    if not stripped:
        return "empty text"
    for size in range(1, 17):
        for match in re.finditer(r"(.{" + str(size) + r"})\1{15,}", stripped, re.DOTALL):
            unit = match.group(1)
            if unit.isspace():
                continue
            run = match.group(0)
            covers = len(run) / len(stripped)
            if (len(run) >= 64 and covers >= 0.4) or (match.end() == len(stripped) and len(run) >= 32 * size):
                return f"{unit!r} repeated {len(match.group(0)) // size} times ({covers:.0%} of the text)"
    return None


def agreement(text: str, baseline: str) -> int | None:
    """Length of the common prefix, or None when the texts are identical."""
    if text == baseline:
        return None
    n = 0
    for a, b in zip(text, baseline):
        if a != b:
            break
        n += 1
    return n


def error_lines(log_text: str) -> list[str]:
    pattern = re.compile("|".join(f"(?:{p})" for p in ERROR_PATTERNS), re.IGNORECASE)
    return [line.strip() for line in log_text.splitlines() if pattern.search(line)]


def verdicts(report: BenchReport, logs: dict[str, str], floor: float) -> list[Verdict]:
    """One verdict per (workload, speculative target); the baseline's own text is checked for degeneracy too."""
    out: list[Verdict] = []
    base_text = {
        s.workload: s.text for s in report.samples if s.target == report.baseline and s.repeat == 0 and s.turn == 0
    }
    for row in report.rows:
        problems: list[str] = []
        text = next(
            (
                s.text
                for s in report.samples
                if (s.workload, s.target, s.repeat, s.turn) == (row.workload, row.target, 0, 0)
            ),
            "",
        )
        if bad := degenerate(text):
            problems.append(f"degenerate text: {bad}")
        agreed: int | None = None
        if row.target != report.baseline:
            if report.temperature > 0:
                problems.append(f"temperature {report.temperature}: the output cannot be compared; run at 0")
            elif row.workload in base_text:
                baseline = base_text[row.workload]
                agreed = agreement(text, baseline)
                needed = min(MIN_AGREEMENT_CHARS, len(baseline) // 4)
                if agreed is not None and agreed < needed:
                    problems.append(f"parts from the baseline's greedy text at character {agreed} (< {needed})")
            if not row.drafted:
                problems.append("no tokens drafted: speculation is off or not reported")
            elif row.acceptance is not None and row.acceptance < floor:
                problems.append(f"acceptance {row.acceptance:.0%} below the floor {floor:.0%}")
            errors = error_lines(logs.get(row.target, ""))
            if errors:
                problems.append(f"{len(errors)} error line(s) in its log, first: {errors[0][:160]}")
        out.append(
            Verdict(
                workload=row.workload,
                target=row.target,
                ok=not problems,
                problems=problems,
                agreement_chars=agreed,
                acceptance=row.acceptance,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("bench_json", type=Path)
    parser.add_argument("--log", action="append", default=[], metavar="TARGET=PATH")
    parser.add_argument("--floor", type=float, default=0.3, help="lowest acceptable draft acceptance (0-1)")
    args = parser.parse_args(argv)
    try:
        report = BenchReport.model_validate(json.loads(args.bench_json.read_text()))
        logs = {}
        for item in args.log:
            target, _, path = item.partition("=")
            logs[target] = Path(path).read_text(errors="replace")
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not report.rows:
        report.summarize()
    results = verdicts(report, logs, args.floor)
    for v in results:
        agreed = "identical" if v.agreement_chars is None else f"agrees for {v.agreement_chars} chars"
        status = "ok  " if v.ok else "FAIL"
        print(f"{status} {v.workload:<12} {v.target:<24} {agreed}; " + ("; ".join(v.problems) or "no problems"))
    return 0 if all(v.ok for v in results) else 1


if __name__ == "__main__":
    sys.exit(main())
