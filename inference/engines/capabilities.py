"""What a llama-server accepts, read from its `--help` (never guessed), and the engines whose flag tables ship in
`dialects/`, so a profile renders for them before anything is built."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

SDIST_VERSION_PIN = "0.3.36"  # llama-cpp-python: its sdist vendors upstream llama.cpp (with DFlash and MTP)
DIALECTS = Path(__file__).parents[1] / "dialects"
DEFAULT_HELP = DIALECTS / "beellama-v0.2.0-help.txt"


class Capabilities(BaseModel):
    """What a llama-server binary accepts, read from its `--help` (never guessed)."""

    flags: list[str] = Field(default_factory=list)
    spec_types: list[str] = Field(default_factory=list)
    cache_types: list[str] = Field(default_factory=list)

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def dflash_dialect(self) -> Literal["beellama", "upstream", "none"]:
        if "dflash" in self.spec_types and self.has("--spec-dflash-cross-ctx"):
            return "beellama"
        if "draft-dflash" in self.spec_types:
            return "upstream"
        return "none"


def parse_help(text: str) -> Capabilities:
    flags = sorted(set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text)))
    spec_types: list[str] = []
    cache_types: list[str] = []
    for block in re.split(r"\n(?=\S|\s{0,4}-)", text):
        if "--spec-type" in block:
            spec_types = _choices(block, "--spec-type") or spec_types
        if "--cache-type-k" in block:
            cache_types = _choices(block, "--cache-type-k") or cache_types
    return Capabilities(flags=flags, spec_types=spec_types, cache_types=cache_types)


def _choices(block: str, flag: str) -> list[str]:
    """Values listed as `FLAG a,b,c`, `[a|b|c]`, `{a,b}` or `allowed values: a, b` in one option's help."""
    listed = rf"{re.escape(flag)}\s+\[?([\w.-]+(?:[|,][\w.-]+)+)\]?"
    for pattern in (listed, r"\[([\w.-]+(?:\|[\w.-]+)+)\]", r"\{([\w.-]+(?:,\s*[\w.-]+)+)\}"):
        if found := re.search(pattern, block):
            return [v.strip() for v in re.split(r"[|,]", found.group(1))]
    if found := re.search(r"(?:allowed values|values|one of)[^:]*:\s*([\w.-]+(?:,\s*[\w.-]+)+)", block, re.I):
        return [v.strip() for v in found.group(1).split(",")]
    return []


def default_capabilities() -> Capabilities:
    """What `agent engine build` builds by default (BeeLlama at its pin) accepts, from that version's real `--help`."""
    return parse_help(DEFAULT_HELP.read_text())


class KnownEngine(BaseModel):
    """An engine whose flag table ships in `dialects/`, so a profile renders for it before anything is built."""

    name: str
    label: str  # what the flag table was read from
    help_file: str  # in dialects/
    build: str  # the command that builds it

    def capabilities(self) -> Capabilities:
        return parse_help((DIALECTS / self.help_file).read_text())


KNOWN_ENGINES: dict[str, KnownEngine] = {
    e.name: e
    for e in (
        KnownEngine(
            name="beellama-v0.2",
            label="BeeLlama v0.2.0 (its real --help)",
            help_file="beellama-v0.2.0-help.txt",
            build="agent engine build --source beellama",
        ),
        KnownEngine(
            name="beellama-v0.4",
            label="BeeLlama v0.4.x (the flag table of its v0.4.3 source; v0.4.4 documents the same Bee flags)",
            help_file="beellama-v0.4.3-help.txt",
            build="agent engine build --source beellama --ref v0.4.4",
        ),
        KnownEngine(
            name="upstream",
            label=f"upstream llama.cpp (the real --help of the llama-cpp-python {SDIST_VERSION_PIN} sdist's build)",
            help_file=f"upstream-sdist-{SDIST_VERSION_PIN}-help.txt",
            build="agent engine build --source pypi-sdist",
        ),
    )
}


def known_engine(name: str) -> KnownEngine:
    if name not in KNOWN_ENGINES:
        raise KeyError(f"unknown engine {name!r}; known: {', '.join(KNOWN_ENGINES)}")
    return KNOWN_ENGINES[name]
