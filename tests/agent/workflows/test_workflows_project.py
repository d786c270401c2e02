"""`new-project` in each language with the real toolchains: the project's environment is made first (a
Python .venv with pytest on a PATH that has no `python` and no pytest), the model's commands see it but get
no network, and the final test run uses the language's own command. A scripted model writes the files (the
model is not the point: the environment, the gate and the verification are)."""

from __future__ import annotations

import git
import pytest

from agent.settings.config import Config
from agent.workflows.runs import new_project
from tests.agent.checks.test_project import NODE_PROJECT, RUST_CRATE
from tools.sandbox import probe_bwrap

BWRAP = probe_bwrap()
pytestmark = pytest.mark.skipif(not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem}")

FINISH = "<finish><summary>built it</summary></finish>"
NO_NETWORK = "python3 -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=5)\" || echo NO-NETWORK"
CALC = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def reply(files: dict[str, str], *commands: str) -> str:
    writes = "".join(
        f"<write_file>\n<path>{p}</path>\n<content>\n{t}</content>\n</write_file>\n" for p, t in files.items()
    )
    runs = "".join(f"<bash>\n<command>{c}</command>\n</bash>\n" for c in commands)
    return f"I will write the project and run its tests.\n{writes}{runs}"


def observations(backend) -> str:
    return "\n".join(m.content for m in backend.calls[-1]["messages"] if m.role != "system")


@pytest.mark.slow
def test_python_on_a_stock_path_gets_its_own_venv(tmp_path, monkeypatch, scripted):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `python`, and python3 has no pytest
    backend = scripted([reply(CALC, "python -m pytest -q", "which python", NO_NETWORK), FINISH])
    target = tmp_path / "calc"
    result = new_project(
        target, "A Python module calc.py with add(a, b), with pytest tests.", Config(), backend=backend
    )
    seen = observations(backend)
    assert "1 passed" in seen and f"{target}/.venv/bin/python" in seen, seen
    assert "NO-NETWORK" in seen, "the model's commands get no network, only the install step may"
    assert result.run.status == "finished" and result.tests and result.tests.passed
    assert result.tests.command == "python -m pytest -q"
    assert result.setup and result.setup.installed[0] == ".venv (python3 -m venv .venv)"
    assert "pytest into .venv" in result.setup.describe()
    repo = git.Repo(target)
    committed = {b.path for b in repo.head.commit.tree.traverse()}
    assert {"calc.py", "test_calc.py"} <= committed and not any(p.startswith(".venv") for p in committed)
    assert "Environment: .venv (python3 -m venv .venv), pytest into .venv" in repo.head.commit.message


@pytest.mark.slow
@pytest.mark.parametrize(
    "prompt, files, command, run",
    [
        (
            "A small Node.js module sum.js exporting sum(a, b), tested with node --test.",
            NODE_PROJECT,
            "npm test",
            "node --test",
        ),
        ("A Rust crate with a function sum(a, b).", RUST_CRATE, "cargo test", "cargo test"),
    ],
)
def test_node_and_rust_projects_are_tested_with_their_own_command(tmp_path, scripted, prompt, files, command, run):
    backend = scripted(
        ["I will check the tests first.\n<bash>\n<command>ls</command>\n</bash>", FINISH, reply(files, run), FINISH]
    )
    target = tmp_path / "proj"
    result = new_project(target, prompt, Config(), backend=backend)
    task = backend.calls[0]["messages"][1].content
    assert f"Run the tests with `{run}`" in task and "test_*.py" not in task
    refused = backend.calls[2]["messages"][-1].content
    assert "there are no tests yet" in refused, "finish is refused while the project has no tests"
    assert result.run.status == "finished" and result.tests and result.tests.passed, result.tests
    assert result.tests.command == command and result.setup and result.setup.describe() == "nothing to install"
    committed = {b.path for b in git.Repo(target).head.commit.tree.traverse()}
    assert set(files) <= committed and not any(p.startswith(("target/", ".venv")) for p in committed)
