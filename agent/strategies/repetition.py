"""Cutting a reply that degenerates into repetition while it streams, not after max_tokens.

Small models sometimes fall into a loop inside one reply: the same characters over and over, line after line
of near-identical test cases, or one block of lines written again and again, often inside a tool call's
content (a `write_file` whose content repeats one six-line `with patch(...)` block until max_tokens, never
closing the call). At ~10 tok/s a 2,048-token loop costs the user minutes for nothing."""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.core.loop import RunResult
from agent.strategies.base import Run, Strategy, Then

MIN_LINES = 30  # a reply this long may be judged on its lines ...
WINDOW_LINES = 30  # ... the last this many of them ...
MAX_SHAPES = 3  # ... are degenerate when they have at most this many distinct shapes
TAIL_CHARS = 600  # the stretch checked for a verbatim cycle
MAX_PERIOD = 150
MAX_BLOCK_LINES = 12  # a block of at most this many lines ...
BLOCK_SPAN = 18  # ... repeated verbatim over the last this many lines (at least 3 times) is a loop
NUMBER = re.compile(r"\d+(\.\d+)?")
STRING = re.compile(r"(['\"])(?:\\.|(?!\1).)*\1")


class RepetitionCut(Strategy):
    """Around every reply of the run: a reply that falls into repetition is cut as it streams."""

    name = "repetition cut"

    def applies(self, run: Run) -> bool:
        return True  # any reply of any task may loop

    def run(self, run: Run, then: Then) -> RunResult:
        run = run.but()
        run.equipment.watch = new_guard
        return then(run)


def new_guard() -> Callable[[str], bool]:
    """A fresh guard's `feed`, for one streamed reply."""
    return RepetitionGuard().feed


class RepetitionGuard:
    """Fed the streamed text; `degenerate` once the reply has started looping."""

    def __init__(self) -> None:
        self.text = ""
        self._checked_at = 0

    def feed(self, delta: str) -> bool:
        """Add a streamed piece; True when the reply should be cut."""
        self.text += delta
        if len(self.text) - self._checked_at < 64:  # checking every few tokens is enough
            return False
        self._checked_at = len(self.text)
        lines = unescaped(self.text)
        return repeats_verbatim(self.text) or repeats_line_shapes(lines) or repeats_block(lines)


def unescaped(text: str) -> str:
    """`text` with JSON's line and quote escapes read: a tool call's content in JSON is one long line."""
    return text.replace("\\n", "\n").replace('\\"', '"') if "\\n" in text else text


def repeats_verbatim(text: str) -> bool:
    """The tail is one short stretch repeated (`foo(1) foo(1) foo(1) ...`, `11111111...`)."""
    tail = text[-TAIL_CHARS:]
    if len(tail) < TAIL_CHARS:
        return False
    return any(tail[period:] == tail[:-period] for period in range(1, MAX_PERIOD + 1))


def repeats_line_shapes(text: str) -> bool:
    """The last lines differ only in their numbers and strings (`assert f(3) == 9`, `assert f(4) == 16`, ...)."""
    lines = [line.strip() for line in text.splitlines()[:-1] if line.strip()]  # the last line may be unfinished
    if len(lines) < MIN_LINES:
        return False
    shapes = {STRING.sub('""', NUMBER.sub("0", line)) for line in lines[-WINDOW_LINES:]}
    return len(shapes) <= MAX_SHAPES


def repeats_block(text: str) -> bool:
    """The last lines are one block of up to MAX_BLOCK_LINES lines written again and again, verbatim."""
    lines = [line.strip() for line in text.splitlines()[:-1] if line.strip()]  # the last line may be unfinished
    for size in range(1, MAX_BLOCK_LINES + 1):
        span = max(BLOCK_SPAN, 3 * size) // size * size
        if len(lines) >= span and all(a == b for a, b in zip(lines[-span:], lines[-span + size :])):
            return True
    return False
