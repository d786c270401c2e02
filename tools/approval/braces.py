"""Bash brace expansion for the approval analysis: `{a,b}` lists and `{1..3}` / `{a..c}` sequences, on a
pattern whose quoted characters are escaped (`escape`), bounded by MAX_BRACE_WORDS."""

from __future__ import annotations

import re
from itertools import pairwise

MAX_BRACE_WORDS = 256  # `{a,b}{c,d}...`: more words than this from one word is not read


def escape(s: str) -> str:
    """Quoted text in a pattern: its braces, commas and backslashes are literal."""
    return re.sub(r"([{},\\])", r"\\\1", s)


def unescape(s: str) -> str:
    """A word of the expanded pattern as bash gives it."""
    return re.sub(r"\\(.)", r"\1", s, flags=re.DOTALL)


def expand_braces(pattern: str) -> list[str] | None:
    """Bash brace expansion of an escaped pattern (`\\x` is literal); None past MAX_BRACE_WORDS words.
    `{a,b}` lists and `{1..3}` / `{a..c}` sequences are expanded; anything else is left as written."""
    words = [pattern]
    done: list[str] = []
    while words:
        word = words.pop()
        found = _first_brace(word)
        if found is None:
            done.append(word)
        else:
            start, end, items = found
            words += [word[:start] + item + word[end + 1 :] for item in reversed(items)]
        if len(done) + len(words) > MAX_BRACE_WORDS:
            return None
    return done


SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def _first_brace(word: str) -> tuple[int, int, list[str]] | None:
    """The first `{...}` that bash expands: (start, end, the alternatives), or None."""
    i = 0
    while i < len(word):
        if word[i] == "\\":
            i += 2
            continue
        if word[i] == "{":
            depth, j, commas = 0, i, []
            while j < len(word):
                ch = word[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif ch == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j < len(word):
                if commas:
                    bounds = [i, *commas, j]
                    return i, j, [word[a + 1 : b] for a, b in pairwise(bounds)]
                sequence = SEQUENCE.fullmatch(word[i + 1 : j])
                if sequence:
                    items = _sequence(*sequence.groups())
                    if items is not None:
                        return i, j, items
        i += 1
    return None


def _sequence(first: str, last: str, step: str | None) -> list[str] | None:
    by = abs(int(step)) if step and step.lstrip("-") != "0" else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // by > MAX_BRACE_WORDS:
            return None
        return [str(v) for v in range(a, b + (1 if b >= a else -1), by if b >= a else -by)]
    if first.isalpha() and last.isalpha() and len(first) == len(last) == 1:
        a, b = ord(first), ord(last)
        return [escape(chr(v)) for v in range(a, b + (1 if b >= a else -1), by if b >= a else -by)]
    return None
