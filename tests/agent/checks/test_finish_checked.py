"""Done means checked, through the real CLI (`agent new-project`, `agent run`), `refactor` and `agent eval`'s
runner: a scripted model (agent/workflows/runs.py's backend replaced) finishes without doing the work, and the
real runners (npm, node, pytest, cargo) under the real sandbox say no test ran; nothing reports it finished."""

from __future__ import annotations

import json
from contextlib import contextmanager

import git
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.evals.runner import run_one
from agent.evals.tasks import EvalTask
from agent.settings.config import Config
from agent.workflows import runs as workflows
from agent.workflows.refactor import refactor
from tests.agent.checks.test_project import RUST_CRATE, write
from tools.sandbox import probe_bwrap

BWRAP = probe_bwrap()
pytestmark = pytest.mark.skipif(not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem}")

runner = CliRunner()
FINISH = "<finish><summary>Done: slugify.js is written and tested.</summary></finish>"
PACKAGE_JSON = json.dumps({"name": "slugify", "version": "1.0.0", "scripts": {"test": "node --test"}})
SLUGIFY = (
    "function slugify(text) {\n  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-');\n}\n\n"
    "module.exports = { slugify };\n"
)
SLUGIFY_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { slugify } = require('./slugify');\n\n"
    "test('slugify', () => assert.strictEqual(slugify('Hello World'), 'hello-world'));\n"
)
PROMPT = "A Node module `slugify.js` exporting slugify(text), with tests."
AGENTS_NPM_TEST = {"AGENTS.md": "# x\n\n## Tests\nRun `npm test`.\n"}


def writes(files: dict[str, str]) -> str:
    return "".join(
        f"<write_file>\n<path>{p}</path>\n<content>\n{t}</content>\n</write_file>\n" for p, t in files.items()
    )


@pytest.fixture
def model(scripted, monkeypatch, tmp_path):
    """The run's backend replies with `model.replies` (set by the test); sessions kept under tmp_path."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    backend = scripted([])

    @contextmanager
    def session(_config):
        yield backend

    monkeypatch.setattr(workflows, "backend_session", session)
    return backend


def refusals(backend) -> list[str]:
    return [m.content for m in backend.calls[-1]["messages"] if "finish refused" in m.content]


def test_new_project_with_only_package_json_is_not_finished(tmp_path, model):
    """The model writes package.json ("test": "node --test") and no module, no test, then finishes: npm test
    exits 0 having run nothing. Refused, not reported finished, and the commit says what ran."""
    model.replies = [writes({"package.json": PACKAGE_JSON}), FINISH]
    target = tmp_path / "slug"
    result = runner.invoke(app, ["new-project", str(target), "--prompt", PROMPT, "--max-steps", "3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["run"]["status"] != "finished", out["run"]
    tests = out["tests"]
    assert tests["command"] == "npm test" and tests["exit_code"] == 0 and not tests["passed"], tests
    assert tests["summary"] == "no tests ran (node --test found no test files)"
    assert out["missing"] == ["slugify.js (no such file)"]
    told = refusals(model)[0]
    assert "`npm test` ran no tests" in told and "slugify.js (no such file)" in told, told
    message = git.Repo(target).head.commit.message
    assert "finished" not in message.split("\n\n")[1], message
    assert "`npm test`: no tests ran (node --test found no test files); missing: slugify.js" in message


def test_the_summary_says_what_ran_and_no_check_mark_for_a_vacuous_run(tmp_path, model):
    model.replies = [writes({"package.json": PACKAGE_JSON}), FINISH]
    result = runner.invoke(app, ["new-project", str(tmp_path / "a"), "--prompt", PROMPT, "--max-steps", "3"])
    shown = result.stderr
    assert "✓" not in shown and "npm test → no tests ran (node --test found no test files)" in shown, shown
    assert "missing:  slugify.js (no such file)" in shown
    model.replies = [
        writes({"package.json": PACKAGE_JSON, "slugify.js": SLUGIFY, "slugify.test.js": SLUGIFY_TEST}),
        FINISH,
    ]
    result = runner.invoke(app, ["new-project", str(tmp_path / "b"), "--prompt", PROMPT, "--max-steps", "3"])
    shown = result.stderr
    assert "✓ finished" in shown and "npm test → 1 test passed" in shown and "missing:" not in shown, shown


def make_repo(path, files: dict[str, str]) -> git.Repo:
    path.mkdir(parents=True)
    write(path, files)
    repo = git.Repo.init(path, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit("start", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return repo


ZERO_TESTS = {
    "pytest": ({"test_x.py": "def helper():\n    return 1\n"}, "python -m pytest -q", "pytest collected no tests"),
    "node": ({"package.json": PACKAGE_JSON}, "npm test", "node --test found no test files"),
    "npm placeholder": (
        {
            **AGENTS_NPM_TEST,
            "package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
        },
        "npm test",
        "package.json's test script is npm's placeholder, which runs nothing",
    ),
    "npm without a test script": (
        {**AGENTS_NPM_TEST, "package.json": json.dumps({"name": "x"})},
        "npm test",
        "package.json has no test script",
    ),
    "cargo": (
        {**RUST_CRATE, "src/lib.rs": "pub fn sum(a: i64, b: i64) -> i64 {\n    a + b\n}\n"},
        "cargo test",
        "cargo test found no #[test] functions",
    ),
}


@pytest.mark.parametrize(
    "form", [pytest.param(f, marks=pytest.mark.slow) if f == "cargo" else f for f in ZERO_TESTS]
)  # fmt: skip
def test_agent_run_is_not_finished_on_each_runners_zero_tests(tmp_path, model, form):
    files, command, why = ZERO_TESTS[form]
    make_repo(tmp_path / "r", files)
    model.replies = [FINISH]
    result = runner.invoke(
        app, ["run", "Tidy up the code.", "--repo", str(tmp_path / "r"), "--max-steps", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["run"]["status"] != "finished", out["run"]
    assert out["tests"]["command"] == command and not out["tests"]["passed"]
    assert out["tests"]["summary"] == f"no tests ran ({why})", out["tests"]
    assert f"`{command}` ran no tests" in refusals(model)[0]


def test_an_ordinary_task_in_a_repository_without_tests_still_finishes(tmp_path, model):
    """The other direction: nothing named is to be made, there is no test command: the typo fix finishes."""
    make_repo(tmp_path / "r", {"README.md": "Teh tool.\n", "tool.py": "def main():\n    return 0\n"})
    model.replies = [writes({"README.md": "The tool.\n"}), FINISH]
    result = runner.invoke(app, ["run", "Fix the typo 'Teh' in README.md.", "--repo", str(tmp_path / "r"), "--json"])
    out = json.loads(result.stdout)
    assert out["run"]["status"] == "finished" and out["tests"] is None and out["missing"] == [], out


def test_refactor_verify_that_runs_no_tests_does_not_pass(tmp_path, scripted):
    make_repo(tmp_path / "r", {"calc.py": "def add(a, b):\n    return a + b\n"})
    change = writes({"calc.py": "def add(a, b):\n    return b + a\n"})
    report = refactor(
        "Swap the operands in add.",
        [tmp_path / "r"],
        Config(max_steps=2, attempts=1, mcp=False),
        verify="python -m pytest -q",
        backends=lambda: scripted([change, FINISH]),
    )
    (outcome,) = report.repos
    assert outcome.status == "failed" and outcome.run_status != "finished", outcome
    assert outcome.reason == "`python -m pytest -q` ran no tests: pytest collected no tests"


def test_eval_rows_record_what_the_final_check_ran(tmp_path, scripted):
    task = EvalTask(id="slug", prompt=PROMPT, check_command="test -f slugify.js")
    config = Config(max_steps=3, attempts=1, mcp=False)
    vacuous = run_one(
        task, 1, config, scripted([writes({"package.json": PACKAGE_JSON}), FINISH]), tmp_path / "a", "agent"
    )
    assert vacuous.status != "finished" and not vacuous.passed and not vacuous.vacuous, vacuous
    assert vacuous.tests == "`npm test`: no tests ran (node --test found no test files)"
    assert vacuous.missing == ["slugify.js (no such file)"]
    files = {"package.json": PACKAGE_JSON, "slugify.js": SLUGIFY, "slugify.test.js": SLUGIFY_TEST}
    done = run_one(task, 1, config, scripted([writes(files), FINISH]), tmp_path / "b", "agent")
    assert done.status == "finished" and done.passed and done.tests == "`npm test`: 1 test passed", done
