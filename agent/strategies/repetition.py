"""Cutting a reply that degenerates into repetition while it streams, not after max_tokens.

Small models sometimes fall into a loop inside one reply: the same characters over and over, or line after
line of near-identical test cases. At ~10 tok/s a 2,048-token loop costs the user minutes for nothing."""

from __future__ import annotations

import re

MIN_LINES = 30  # a reply this long may be judged on its lines ...
WINDOW_LINES = 30  # ... the last this many of them ...
MAX_SHAPES = 3  # ... are degenerate when they have at most this many distinct shapes
TAIL_CHARS = 600  # the stretch checked for a verbatim cycle
MAX_PERIOD = 150
NUMBER = re.compile(r"\d+(\.\d+)?")
STRING = re.compile(r"(['\"])(?:\\.|(?!\1).)*\1")


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
        return repeats_verbatim(self.text) or repeats_line_shapes(self.text)


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
