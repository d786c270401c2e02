"""The bash tool on real processes: exit codes, timeouts that kill the whole group, output floods, secrets."""

from __future__ import annotations

import time

import pytest

from tools.base import ToolContext, ToolPolicy
from tools.sandbox import SandboxPolicy, probe_bwrap
from tools.shell import BashTool, CappedOutput, command_environment, run_command


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(tmp_path, ToolPolicy(command_timeout=5, max_output_chars=2000))


def test_runs_in_the_workspace_and_reports_exit_code(ctx):
    result = BashTool().invoke({"command": "pwd; echo out; echo err >&2; exit 3"}, ctx)
    assert result.is_error
    assert result.output.startswith("exit code 3")
    assert str(ctx.workspace) in result.output and "out" in result.output and "err" in result.output


def test_timeout_kills_the_process_group(ctx, tmp_path):
    marker = tmp_path / "survivor"
    started = time.monotonic()
    result = BashTool().invoke({"command": f"(sleep 3; touch {marker}) & sleep 30", "timeout": 1}, ctx)
    assert time.monotonic() - started < 4
    assert result.is_error and "timed out after 1s" in result.output
    time.sleep(3.5)
    assert not marker.exists(), "a child of the timed-out command survived"


def test_background_children_do_not_outlive_the_command(ctx, tmp_path):
    marker = tmp_path / "late"
    result = BashTool().invoke({"command": f"(sleep 2; touch {marker}) & echo started"}, ctx)
    assert "started" in result.output
    time.sleep(2.5)
    assert not marker.exists()


def test_output_flood_is_capped_with_a_note(ctx):
    result = BashTool().invoke({"command": "yes 0123456789 | head -c 5000000; echo END"}, ctx)
    assert len(result.output) < 3000
    assert "bytes of output cut" in result.output
    assert result.output.rstrip().endswith("END")


def test_endless_output_is_bounded_by_the_timeout(ctx):
    result = BashTool().invoke({"command": "yes flood", "timeout": 1}, ctx)
    assert "timed out" in result.output and len(result.output) < 3000


def test_secrets_are_not_passed_to_commands(ctx, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("HARMLESS_SETTING", "invisible")
    monkeypatch.setenv("LC_TIME", "C")
    result = BashTool().invoke({"command": "env"}, ctx)
    assert "hf_secret_value" not in result.output and "sk-secret" not in result.output
    assert "HARMLESS_SETTING" not in result.output, "the environment is an allow-list"
    assert "LC_TIME=C" in result.output and "PATH=" in result.output and "HOME=" in result.output


def test_allowed_names_reach_commands_but_patterns_never_let_a_secret_through(tmp_path, monkeypatch):
    monkeypatch.setenv("MYAPP_MODE", "fast")
    monkeypatch.setenv("MYAPP_TOKEN", "tok-should-not-pass")
    monkeypatch.setenv("DEPLOY_KEY", "explicitly-allowed-key")
    monkeypatch.setenv("PYTHONPATH", "/agent/own/path")
    sandbox = SandboxPolicy(allow_env=["MYAPP_*", "DEPLOY_KEY"])
    env = command_environment(sandbox.allow_env)
    assert env["MYAPP_MODE"] == "fast" and env["DEPLOY_KEY"] == "explicitly-allowed-key"
    assert "MYAPP_TOKEN" not in env and "PYTHONPATH" not in env
    ctx = ToolContext(tmp_path, ToolPolicy(command_timeout=5, sandbox=sandbox))
    result = BashTool().invoke({"command": "echo mode=$MYAPP_MODE token=${MYAPP_TOKEN:-unset} key=$DEPLOY_KEY"}, ctx)
    assert "mode=fast token=unset" in result.output
    assert "key=[redacted: value of $DEPLOY_KEY]" in result.output, "a secret's value is redacted from output"


def test_secret_values_found_elsewhere_are_redacted_from_output(ctx, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnop")
    (ctx.workspace / ".env").write_text("HF_TOKEN=hf_abcdefghijklmnop\n")
    result = BashTool().invoke({"command": "cat .env"}, ctx)
    assert "hf_abcdefghijklmnop" not in result.output and "[redacted: value of $HF_TOKEN]" in result.output


def test_read_only_mode_refuses_writes_in_commands(tmp_path):
    ctx = ToolContext(tmp_path, ToolPolicy(command_timeout=5, sandbox=SandboxPolicy(mode="read-only")))
    if not probe_bwrap().ok:
        pytest.skip(f"no bubblewrap here: {probe_bwrap().problem}")
    result = BashTool().invoke({"command": "cat /etc/hostname >/dev/null && echo read-ok; touch made"}, ctx)
    assert "read-ok" in result.output and "Read-only file system" in result.output
    assert not (tmp_path / "made").exists()


def test_pytest_without_tests_gets_a_hint(ctx):
    result = BashTool().invoke({"command": "python -m pytest -q -p no:cacheprovider"}, ctx)
    assert "hint: pytest found no tests" in result.output


def test_missing_command_argument_is_an_error_result(ctx):
    result = BashTool().invoke({"cmd": "ls"}, ctx)
    assert result.is_error and "command" in result.output and "bash(command, timeout?)" in result.output


def test_capped_output_keeps_head_and_tail():
    capped = CappedOutput(10)
    for piece in [b"abcde", b"fghij", b"klmno", b"pqrst"]:
        capped.add(piece)
    text = capped.text()
    assert text.startswith("abcde") and text.endswith("pqrst") and "10 bytes of output cut" in text


def test_non_utf8_output_is_replaced_not_fatal(tmp_path):
    outcome = run_command("printf '\\xff\\xfe ok'", tmp_path, timeout=5, max_output=100, sandbox=SandboxPolicy())
    assert outcome.exit_code == 0 and "ok" in outcome.output
