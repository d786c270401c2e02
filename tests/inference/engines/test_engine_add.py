"""`agent engine add`: a llama-server someone built elsewhere (here: the sdist build copied out of the engine
cache, as a user's own binary) is registered with what its `--help` says, and profiles run on it."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from agent.cli import app
from inference.engines.engine import list_engines
from inference.profiles import BUILTIN_PROFILES
from inference.server import choose_engine

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_users_own_llama_server_is_registered_and_chosen(engine, cache, tmp_path):
    own = tmp_path / "my-build" / "bin"
    own.mkdir(parents=True)
    shutil.copy2(engine.binary, own / "llama-server")  # a static build: the binary alone runs
    result = runner.invoke(app, ["engine", "add", str(own)])
    assert result.exit_code == 0, result.output
    [added] = list_engines()
    assert added.source == f"local:{own / 'llama-server'}" and added.options.backend == "cpu"
    assert added.capabilities == engine.capabilities  # read from its own --help, as a build's is
    assert choose_engine(BUILTIN_PROFILES["qwen-cpu"]).key == added.key
    listed = runner.invoke(app, ["engine", "list"])
    assert added.key[:8] in listed.stdout


def test_what_is_not_a_llama_server_is_refused_in_one_line(cache, tmp_path):
    script = tmp_path / "llama-server"
    script.write_text("#!/bin/sh\necho 'usage: something else'\n")
    script.chmod(0o755)
    result = runner.invoke(app, ["engine", "add", str(script)])
    assert result.exit_code == 1 and "not a llama-server" in result.output
    missing = runner.invoke(app, ["engine", "add", str(tmp_path / "nope")])
    assert missing.exit_code == 1 and "neither a llama-server binary" in missing.output
    assert list_engines() == []
