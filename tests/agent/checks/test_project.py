"""The project, known once (agent/checks/project.py): its language and test command for every ecosystem, AGENTS.md's
command winning, the drafted AGENTS.md, and the real toolchains (node --test, cargo test, pytest in the
project's own .venv) run under the sandbox the way the finish gate and `run` run them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent.checks.finish import run_project_tests
from agent.checks.project import (
    command_policy,
    detect_test_command,
    draft_agents_md,
    guess_language,
    language,
    python_env,
    setup_environment,
    write_agents_md,
)
from agent.checks.project import test_command as project_test_command
from agent.settings.config import Config
from tools.sandbox import SandboxPolicy, probe_bwrap

BWRAP = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem}")

NODE_PROJECT = {
    "package.json": json.dumps({"name": "sums", "version": "1.0.0", "scripts": {"test": "node --test"}}),
    "sum.js": "module.exports = { sum: (a, b) => a + b };\n",
    "sum.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const { sum } = require('./sum');\n\ntest('sum', () => assert.strictEqual(sum(2, 3), 5));\n"
    ),
}
RUST_CRATE = {
    "Cargo.toml": '[package]\nname = "sums"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/lib.rs": (
        "pub fn sum(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    #[test]\n    fn adds() {\n        assert_eq!(sum(2, 3), 5);\n    }\n}\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    "files, lang, command",
    [
        ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "node", "npm test"),
        (
            {
                "package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
                "lib.test.js": "",
            },
            "node",
            "node --test",
        ),
        ({"index.mjs": "", "test/index.mjs": ""}, "node", "node --test"),
        ({"Cargo.toml": "[package]\n"}, "rust", "cargo test"),
        ({"go.mod": "module x\n", "x.go": ""}, "go", "go test ./..."),
        ({"pom.xml": "<project/>"}, "java", "mvn -q test"),
        ({"build.gradle.kts": "", "gradlew": ""}, "java", "./gradlew test"),
        ({"app.py": "", "tests/test_app.py": ""}, "python", "python -m pytest -q"),
        ({"Makefile": "build:\n\ttrue\ntest:\n\t./check.sh\n", "check.sh": ""}, None, "make test"),
        ({"README.md": "", "package.json": "{}", "index.js": ""}, "node", None),
    ],
)
def test_language_and_test_command_per_ecosystem(tmp_path, files, lang, command):
    write(tmp_path, files)
    assert language(tmp_path) == lang
    assert detect_test_command(tmp_path) == command == project_test_command(tmp_path)


def test_agents_md_test_command_wins_and_prose_is_not_a_command(tmp_path):
    write(tmp_path, {"Cargo.toml": "[package]\n", "AGENTS.md": "# x\n\n## Tests\nTests live in `tests/`.\n"})
    assert project_test_command(tmp_path) == "cargo test", "a path in prose is not a command"
    (tmp_path / "AGENTS.md").write_text(
        "# x\n\n## Layout\nRun `ls`.\n\n## Testing\nRun them with `cargo test --all`.\n"
    )
    assert project_test_command(tmp_path) == "cargo test --all"
    (tmp_path / "AGENTS.md").write_text("# x\n\n## How to test\n\n```sh\n$ make check\n```\n")
    assert project_test_command(tmp_path) == "make check"
    assert detect_test_command(tmp_path) == "cargo test", "detection alone ignores AGENTS.md (agent init)"


def test_python_without_a_python_command_uses_python3(tmp_path, monkeypatch):
    write(tmp_path, {"test_a.py": ""})
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # stock Debian: python3 only
    if Path("/usr/bin/python").exists():
        pytest.skip("this machine has /usr/bin/python")
    assert project_test_command(tmp_path) == "python3 -m pytest -q"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    assert project_test_command(tmp_path) == "python -m pytest -q", (
        "the .venv's python comes first on the commands' PATH"
    )
    policy = command_policy(SandboxPolicy(), tmp_path)
    assert policy.env["PATH"].startswith(f"{tmp_path.resolve()}/.venv/bin:") and policy.env["PATH"].endswith(
        "/usr/bin:/bin"
    )
    assert command_policy(SandboxPolicy(), tmp_path / "elsewhere") == SandboxPolicy(
        env={"PYTHONDONTWRITEBYTECODE": "1"}
    )


def test_new_project_language_from_the_request():
    assert guess_language("A Rust crate with a function fib(n)") == "rust"
    assert guess_language("a small Node.js module slug.js with node --test tests") == "node"
    assert guess_language("A JavaScript module") == "node"
    assert guess_language("A Python module with a graph of nodes and a node count") == "python"


def test_draft_describes_layout_languages_tests_and_conventions(tmp_path):
    (tmp_path / "src" / "shop").mkdir(parents=True)
    (tmp_path / "src" / "shop" / "cart.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cart.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "junk.js").write_text("")
    text = draft_agents_md(tmp_path)
    assert text.startswith(f"# {tmp_path.name}\n")
    for line in [
        "- `src/`",
        "- `tests/`",
        "- `pyproject.toml`",
        "- `Makefile`",
        "Python (2 files)",
        "Run the tests with `python -m pytest -q`",
        "pyproject.toml",
        "A Makefile defines common tasks",
    ]:
        assert line in text
    assert "build" not in text.split("## Layout")[1].split("##")[0] and "JavaScript" not in text


def test_draft_other_ecosystems_and_no_tests(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}}))
    (tmp_path / "index.js").write_text("")
    text = draft_agents_md(tmp_path)
    assert "`npm test`" in text and "JavaScript (1 file)" in text and "Node project" in text
    (tmp_path / "package.json").write_text("{}")
    assert "No test command was detected" in draft_agents_md(tmp_path)
    write(tmp_path, RUST_CRATE)
    assert "Run the tests with `cargo test`" in draft_agents_md(tmp_path)
    (tmp_path / "AGENTS.md").write_text("# x\n\n## Tests\nRun `make all-tests`.\n")
    assert "Run the tests with `cargo test`" in draft_agents_md(tmp_path), "--force redrafts from the files"


def test_write_refuses_to_overwrite_unless_forced(tmp_path):
    (tmp_path / "AGENTS.md").write_text("mine\n")
    with pytest.raises(FileExistsError, match="--force"):
        write_agents_md(tmp_path)
    assert (tmp_path / "AGENTS.md").read_text() == "mine\n"
    assert write_agents_md(tmp_path, force=True).read_text().startswith(f"# {tmp_path.name}")


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize(
    "files, broken, command",
    [
        (NODE_PROJECT, ("sum.js", "a - b"), "npm test"),
        (RUST_CRATE, ("src/lib.rs", "a - b"), "cargo test"),
    ],
)
def test_real_toolchains_verify_node_and_rust_projects(tmp_path, files, broken, command):
    write(tmp_path, files)
    passing = run_project_tests(tmp_path, Config())
    assert passing and passing.command == command and passing.passed, passing
    name, body = broken
    (tmp_path / name).write_text((tmp_path / name).read_text().replace("a + b", body))
    failing = run_project_tests(tmp_path, Config())
    assert failing and not failing.passed and failing.exit_code != 0


@pytest.mark.slow
@needs_bwrap
def test_a_stock_path_gets_a_venv_with_pytest_and_no_network_for_other_commands(tmp_path, monkeypatch):
    """PATH=/usr/bin:/bin: no `python`, and python3 has no pytest. The set-up makes .venv with pytest; the
    install may use the network (that step only); the project's tests then pass with `python -m pytest`."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    write(
        tmp_path,
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    report = setup_environment(tmp_path, "python", SandboxPolicy())
    assert report.problem is None and python_env(tmp_path) == tmp_path / ".venv", report
    assert report.installed[0] == ".venv (python3 -m venv .venv)" and report.installed[1].startswith(
        "pytest into .venv"
    )
    assert [s.command for s in report.steps if s.network] in ([], [report.steps[-1].command])
    assert "pip install" in report.steps[-1].command
    outcome = run_project_tests(tmp_path, Config())
    assert outcome and outcome.command == "python -m pytest -q" and outcome.passed, outcome
    again = setup_environment(tmp_path, "python", SandboxPolicy())
    assert again.steps == [] and again.describe() == "nothing to install"


@pytest.mark.slow
@needs_bwrap
def test_offline_without_a_local_copy_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")  # no local index or wheel folder from pip's config
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setattr("agent.checks.project.WHEELHOUSE", tmp_path / "no-wheels")
    report = setup_environment(tmp_path, "python", SandboxPolicy(), offline=True)
    assert report.problem and "offline" in report.problem and not any(s.network for s in report.steps)


@pytest.mark.slow
@needs_bwrap
def test_node_dependencies_are_installed_then_served_from_the_cache_offline(tmp_path):
    """`npm install` (scripts off) with the network for that step only; the next project gets the same package
    from npm's cache with no network at all."""
    manifest = json.dumps({"name": "x", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}})
    first, second = write(tmp_path / "a", {"package.json": manifest}), write(tmp_path / "b", {"package.json": manifest})
    report = setup_environment(first, "node", SandboxPolicy())
    assert report.problem is None and (first / "node_modules" / "is-number").is_dir(), report
    assert [s.command for s in report.steps if s.network] in ([], ["npm install --ignore-scripts --no-audit --no-fund"])
    offline = setup_environment(second, "node", SandboxPolicy(), offline=True)
    assert offline.installed == ["node_modules (npm install), from local files"] and not any(
        s.network for s in offline.steps
    )
    assert setup_environment(second, "node", SandboxPolicy()).steps == [], "installed already: nothing to do"
    assert setup_environment(write(tmp_path / "c", NODE_PROJECT), "node", SandboxPolicy()).steps == [], (
        "no dependencies"
    )


@needs_bwrap
@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed here (pip install uv to run this)")
def test_with_uv_the_venv_is_made_by_uv_and_a_second_project_installs_from_its_cache_offline(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = setup_environment(tmp_path / "a", "python", SandboxPolicy())
    assert first.problem is None and first.installed[0] == ".venv (uv venv -q .venv)", first
    second = setup_environment(tmp_path / "b", "python", SandboxPolicy(), offline=True)
    assert second.installed == [".venv (uv venv -q .venv)", "pytest into .venv, from local files"], second
    assert not any(s.network for s in second.steps)
