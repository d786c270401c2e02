"""One error root: every exception class the program defines derives from `inference.errors.DflashError`, which
the CLI turns into one `error:` line (no list of classes to keep up to date). Subclasses of KeyboardInterrupt
are Ctrl-C and stay outside it."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from typer.testing import CliRunner

from inference.errors import DflashError

ROOT = Path(__file__).resolve().parents[3]


def exception_classes() -> list[type[BaseException]]:
    found = []
    for package in ("agent", "tools", "inference", "skills"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "bundled" in path.parts:  # skills' example files, not the program's code
                continue
            module = importlib.import_module(
                ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            )
            found += [
                cls
                for _, cls in inspect.getmembers(module, inspect.isclass)
                if cls.__module__ == module.__name__ and issubclass(cls, BaseException)
            ]
    return found


def test_every_error_the_program_defines_derives_from_the_root():
    classes = exception_classes()
    assert len(classes) >= 15  # the scan finds them
    stray = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, (DflashError, KeyboardInterrupt))]
    assert stray == [], "derive these from inference.errors.DflashError"


def test_a_lower_layer_error_reaches_the_user_as_one_line(monkeypatch):
    from agent import cli
    from inference import fetch

    def refuse(*_args, **_kwargs):
        raise fetch.FetchError("no source could provide the file; check the network")

    monkeypatch.setattr(fetch, "fetch_model", refuse)
    result = CliRunner().invoke(cli.app, ["models", "pull", "qwen2.5-coder-0.5b"])
    assert result.exit_code == 1, result.output
    assert "error: no source could provide the file" in result.output and "Traceback" not in result.output
