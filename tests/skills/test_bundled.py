"""The bundled skills teach working code: their examples run and their example tests pass."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from skills.loader import discover_skills

CALC = """\
def add(a, b):
    return a + b


def divide(a, b):
    return a / b
"""


def code_blocks(body: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", body, re.DOTALL)


def pytest_in(folder) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_typer_skill_example_passes_its_own_tests(tmp_path):
    cli, tests = code_blocks(discover_skills(user_dirs=[]).get("typer-cli").body)
    (tmp_path / "cli.py").write_text(cli)
    (tmp_path / "test_cli.py").write_text(tests)
    result = pytest_in(tmp_path)
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout
    run = subprocess.run(
        [sys.executable, "cli.py", "greet", "Ann", "--shout"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.stdout.strip() == "HELLO ANN"


@pytest.mark.slow
def test_pytest_skill_template_passes_against_a_calc_module(tmp_path):
    skill = discover_skills(user_dirs=[]).get("python-pytest-project")
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "test_calc.py").write_text((skill.directory / "example_tests.py").read_text())
    result = pytest_in(tmp_path)
    assert result.returncode == 0 and "3 passed" in result.stdout, result.stdout


def fenced(body: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", body, re.DOTALL)


def test_node_skill_example_passes_with_node_test(tmp_path):
    body = discover_skills(user_dirs=[]).get("node-test-project").body
    (manifest,), (module, tests) = fenced(body, "json"), fenced(body, "javascript")
    for name, text in [("package.json", manifest), ("slug.js", module), ("slug.test.js", tests)]:
        (tmp_path / name).write_text(text)
    result = subprocess.run(["npm", "test"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and "# pass 2" in result.stdout and "# fail 0" in result.stdout, result.stdout


@pytest.mark.slow  # compiles Rust
def test_rust_skill_example_passes_with_cargo_test(tmp_path):
    body = discover_skills(user_dirs=[]).get("rust-cargo-project").body
    (manifest,), (lib,) = fenced(body, "toml"), fenced(body, "rust")
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text(manifest)
    (tmp_path / "src" / "lib.rs").write_text(lib)
    result = subprocess.run(
        ["cargo", "test", "--offline"], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0 and "test result: ok. 2 passed" in result.stdout, result.stdout + result.stderr
