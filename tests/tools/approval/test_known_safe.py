"""Outside a sandbox (`full-access`, no bubblewrap) `auto` runs unasked only the known read-only commands
(tools/approval/known_safe.py); everything else asks, or is refused where nobody can be asked. Inside the
sandbox nothing changes: the ordinary corpus still runs unasked."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from tools.approval import ApprovalPolicy, Approver
from tools.base import Toolbox, ToolContext, ToolPolicy
from tools.sandbox import SandboxPolicy
from tools.shell import BashTool


def _corpus():
    spec = importlib.util.spec_from_file_location("approval_corpus", Path(__file__).with_name("corpus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _corpus()

# Destructive or program-running commands that `auto` let through under full-access (from the adversary's list).
FULL_ACCESS_BYPASSES = [
    "script -qc 'rm -rf ~' /dev/null",
    "unshare -r sh -c 'id'",
    "watch -n1 touch /tmp/x",
    "npx -y some-package",
    "uvx some-tool",
    "parallel rm ::: a b",
    ". /dev/stdin",
    "source /dev/stdin",
    "make -f /dev/stdin",
    "make --eval='all:; touch /tmp/x'",
    "gdb -batch -ex 'shell id'",
    "printf '!id\\n' | ed",
    "ed -s file <<< '!id'",
    "git clone 'ext::sh -c id' x",
    "git fetch 'ext::sh -c touch% /tmp/x'",
    "git difftool -x 'sh -c id' HEAD",
    "git init --template=/tmp/evil x",
    "git clone --template=/tmp/evil src dst",
    "cd .git && echo x >> config",
    "echo '[core] fsmonitor = id' >> .gi?/config",
    "echo x > .git/hooks/pre-commit",
    "patch -p1 < fix.diff",
    "patch .git/config < evil.diff",
    "tar -C .git -xf hooks.tar",
    "tar -xf evil.tar",
    "shred -u src/app.py",
    "cp /dev/zero /dev/sda",
    "dd if=/dev/zero of=/dev/sda",
    "systemctl reboot",
    "kexec -e",
    "loginctl poweroff",
    "pkill -9 -u root",
    "killall5 -9",
    "kill -9 -1",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& }; bomb",
    "touch newfile",
    "mkdir build2",
    "python3 -c 'print(1)'",
    "python -m pytest -q",
    "sed -i s/x/y/ src/app.py",
    "find . -name '*.py' -exec rm {} +",
    "find . -delete",
    "cat ~/.ssh/id_rsa",
    "cat /etc/shadow",
    "grep -r token ../",
    "ls > listing.txt",
    "git -c core.pager=sh log",
    "git log --output=/tmp/x",
    "git branch -D main",
    "git status && rm -rf src",
    "echo $(rm -rf src)",
    "LD_PRELOAD=/tmp/x.so ls",
    "sort -o src/app.py src/app.py",
    "date 010100002030",
    "tee out.txt",
    "cd && cat .ssh/id_rsa",
    "cd - && ls",
    "cat .?/.?/etc/passwd",
    "cd sub && git status",
]

# Read-only commands an agent runs to look around: unasked even without a sandbox.
KNOWN_READ_ONLY = [
    "ls -la",
    "ls src",
    "cat src/app.py",
    "head -n 20 src/app.py",
    "tail -5 src/app.py",
    "wc -l src/app.py",
    "grep -rn 'x = ' src",
    "grep -n TODO src/app.py | head -3",
    "find . -name '*.py' -type f",
    "sed -n 1,20p src/app.py",
    "echo hello",
    "pwd",
    "cd src && ls",
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git log --oneline -5",
    "git show HEAD --stat",
    "git branch --show-current",
    "diff src/app.py build/app.py",
    "ls 2>/dev/null",
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = corpus.make_workspace(tmp_path_factory.mktemp("known"))
    subprocess.run(["git", "init", "-q", str(root / "repo")], check=True)
    return root


def review(workspace, command, *, sandboxed, ask=None, search_path=None):
    approver = Approver(ApprovalPolicy(mode="auto"), ask=ask)
    return approver.review(BashTool(), {"command": command}, workspace, sandboxed=sandboxed, search_path=search_path)


@pytest.mark.parametrize("command", FULL_ACCESS_BYPASSES)
def test_without_a_sandbox_anything_not_known_read_only_asks(workspace, command):
    asked = []
    decision = review(workspace, command, sandboxed=False, ask=lambda request: asked.append(request) or False)
    assert not decision.allowed, command
    headless = review(workspace, command, sandboxed=False)
    assert not headless.allowed and "refused by the approval policy" in headless.reason


@pytest.mark.parametrize("command", KNOWN_READ_ONLY)
def test_known_read_only_commands_run_unasked_without_a_sandbox(workspace, command):
    decision = review(workspace, command, sandboxed=False)
    assert decision.allowed, decision.reason


def test_ordinary_commands_do_not_start_asking_under_the_sandbox(workspace):
    asked = [c for c in corpus.ORDINARY if not review(workspace, c, sandboxed=True).allowed]
    assert asked == []


def test_a_program_planted_in_the_workspace_is_not_the_known_one(workspace, tmp_path):
    planted = workspace / ".venv" / "bin"
    planted.mkdir(parents=True, exist_ok=True)
    (planted / "ls").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    (planted / "ls").chmod(0o755)
    search_path = f"{planted}{os.pathsep}{os.environ['PATH']}"
    decision = review(workspace, "ls", sandboxed=False, search_path=search_path)
    assert not decision.allowed and "a file in the project" in decision.reason
    assert review(workspace, "echo hi", sandboxed=False, search_path=search_path).allowed  # a builtin: no lookup


def test_git_in_a_repository_whose_config_runs_a_program_asks(tmp_path):
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert review(repo, "git status", sandboxed=False).allowed
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", "touch /tmp/pwned"], check=True)
    decision = review(repo, "git status", sandboxed=False)
    assert not decision.allowed and "core.fsmonitor" in decision.reason


def test_full_access_through_the_toolbox_refuses_headless_and_runs_known_commands(tmp_path):
    """The real path: Toolbox.run reads the policy's sandbox mode; full-access is outside any sandbox."""
    (tmp_path / "a.txt").write_text("hello\n")
    ctx = ToolContext(
        tmp_path,
        ToolPolicy(sandbox=SandboxPolicy(mode="full-access")),
        approver=Approver(ApprovalPolicy(mode="auto")),
    )
    tools = Toolbox([BashTool()])
    refused = tools.run("bash", {"command": "rm a.txt"}, ctx)
    assert refused.is_error and "runs without a sandbox" in refused.output and (tmp_path / "a.txt").exists()
    shown = tools.run("bash", {"command": "cat a.txt"}, ctx)
    assert not shown.is_error and "hello" in shown.output
