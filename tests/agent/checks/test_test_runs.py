"""What a test command ran: zero tests is a failure with its own message, for every runner the project knows,
with the real runners where they are installed (pytest, node, npm, cargo) and, for the others (go, maven,
gradle, jest, mocha), from the output their documentation shows."""

from __future__ import annotations

import json
import shutil

import pytest

from agent.checks.finish import run_project_tests
from agent.checks.test_runs import describe, read_count
from agent.settings.config import Config
from tests.agent.checks.test_project import NODE_PROJECT, RUST_CRATE, write
from tools.sandbox import probe_bwrap

BWRAP = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem}")

NODE_TESTS_ONLY_IN_PACKAGE_JSON = {"package.json": json.dumps({"name": "slug", "scripts": {"test": "node --test"}})}
AGENTS_NPM_TEST = {"AGENTS.md": "# x\n\n## Tests\nRun `npm test`.\n"}
PLACEHOLDER = 'echo "Error: no test specified" && exit 1'


@needs_bwrap
@pytest.mark.parametrize(
    "files, command, why",
    [
        ({"test_x.py": "def helper():\n    return 1\n"}, "python -m pytest -q", "pytest collected no tests"),
        (
            {"test_x.py": "import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    pass\n"},
            "python -m pytest -q",
            "every test was skipped",
        ),
        (NODE_TESTS_ONLY_IN_PACKAGE_JSON, "npm test", "node --test found no test files"),
        (
            {**AGENTS_NPM_TEST, "package.json": json.dumps({"scripts": {"test": PLACEHOLDER}})},
            "npm test",
            "placeholder",
        ),
        ({**AGENTS_NPM_TEST, "package.json": json.dumps({"name": "x"})}, "npm test", "no test script"),
        (
            {"AGENTS.md": "# x\n\n## Tests\nRun `python3 -m unittest`.\n", "calc.py": "X = 1\n"},
            "python3 -m unittest",
            "unittest found no tests",
        ),
    ],
)
def test_a_run_of_no_tests_fails_with_its_own_message(tmp_path, files, command, why):
    write(tmp_path, files)
    outcome = run_project_tests(tmp_path, Config())
    assert outcome and outcome.command == command, outcome
    assert not outcome.passed and outcome.vacuous, outcome
    assert outcome.summary.startswith("no tests ran (") and why in outcome.summary, outcome.summary
    told = outcome.problem() or ""
    assert f"`{command}` ran no tests" in told and "fails:" not in told


@needs_bwrap
def test_pytest_and_node_say_what_ran(tmp_path):
    (tmp_path / "py").mkdir()
    write(
        tmp_path / "py",
        {"test_x.py": "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n\n\ndef test_c():\n    assert 1 == 2\n"},
    )
    failing = run_project_tests(tmp_path / "py", Config())
    assert failing and not failing.passed and failing.summary == "2 passed, 1 failed", failing
    (tmp_path / "py" / "test_x.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    passing = run_project_tests(tmp_path / "py", Config())
    assert passing and passing.passed and passing.summary == "2 tests passed", passing
    (tmp_path / "node").mkdir()
    write(tmp_path / "node", NODE_PROJECT)
    node = run_project_tests(tmp_path / "node", Config())
    assert node and node.passed and node.command == "npm test" and node.summary == "1 test passed", node


@pytest.mark.slow
@needs_bwrap
@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo here")
def test_cargo_with_no_test_functions_ran_no_tests(tmp_path):
    write(tmp_path, {**RUST_CRATE, "src/lib.rs": "pub fn sum(a: i64, b: i64) -> i64 {\n    a + b\n}\n"})
    empty = run_project_tests(tmp_path, Config())
    assert empty and empty.command == "cargo test" and empty.exit_code == 0, empty
    assert not empty.passed and empty.summary == "no tests ran (cargo test found no #[test] functions)", empty
    write(tmp_path, RUST_CRATE)
    one = run_project_tests(tmp_path, Config())
    assert one and one.passed and one.summary == "1 test passed", one


# go is not installed here: its output as `go help test` and the testing package document it.
GO_NO_TEST_FILES = "?   \texample.com/slug\t[no test files]\n"
GO_NO_TESTS_TO_RUN = "ok  \texample.com/slug\t0.002s [no tests to run]\n"
GO_PACKAGES = "ok  \texample.com/slug\t0.004s\n?   \texample.com/slug/cmd\t[no test files]\n"
GO_VERBOSE = "=== RUN   TestSlug\n--- PASS: TestSlug (0.00s)\n=== RUN   TestEmpty\n--- FAIL: TestEmpty (0.00s)\n"
GO_VERBOSE += "FAIL\nFAIL\texample.com/slug\t0.003s\nFAIL\n"


@pytest.mark.parametrize(
    "command, exit_code, output, summary",
    [
        ("go test ./...", 0, GO_NO_TEST_FILES, "no tests ran (go test found no test files)"),
        ("go test ./...", 0, GO_NO_TESTS_TO_RUN, "no tests ran (go test found no tests to run)"),
        ("go test ./...", 0, 'go: warning: "./..." matched no packages\n', "no tests ran (go test found no test files)"),
        ("go test ./...", 0, GO_PACKAGES, "1 package passed"),
        ("go test -v ./...", 1, GO_VERBOSE, "1 passed, 1 failed"),
        ("npm test", 1, 'npm error Missing script: "test"\n', "no tests ran (package.json has no test script)"),
        ("npm test", 1, "\n> x@1.0.0 test\n> mocha\n\n\n  0 passing (1ms)\n\n", "no tests ran (no tests ran)"),
        ("npm test", 0, "  3 passing (4ms)\n  1 pending\n", "3 tests passed, 1 skipped"),
        ("npm test", 1, "No tests found, exiting with code 1\n", "no tests ran (no test files found)"),
        ("npm test", 1, "Tests:       1 failed, 2 passed, 3 total\n", "2 passed, 1 failed"),
        ("mvn -q test", 0, "[INFO] No tests to run.\n", "no tests ran (maven found no tests to run)"),
        ("mvn -q test", 0, "Tests run: 4, Failures: 0, Errors: 0, Skipped: 1\n", "3 tests passed, 1 skipped"),
        ("gradle test", 0, "> Task :test NO-SOURCE\n\nBUILD SUCCESSFUL in 1s\n", "no tests ran (gradle found no test sources)"),
        ("cargo test", 0, "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n", "no tests ran (cargo test found no #[test] functions)"),
        ("node --test", 0, "\u2139 tests 0\n\u2139 suites 0\n\u2139 pass 0\n\u2139 fail 0\n", "no tests ran (node --test found no test files)"),
        ("make test", 0, "all good\n", "exit 0, the output gives no test count"),
        ("make test", 2, "make: *** [test] Error 1\n", "failed (exit 2)"),
    ],
)  # fmt: skip
def test_each_runner_is_read_from_its_documented_output(command, exit_code, output, summary):
    count = read_count(command, exit_code, output)
    assert describe(count, exit_code) == summary


def test_cargo_output_cut_in_the_middle_is_not_read_as_zero():
    """A summed count is only known from the whole output: a cut one counts nothing rather than too few."""
    cut = "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    cut += "[... 9000 bytes of output cut: showing the first and last 32000 bytes ...]\n" + cut
    assert read_count("cargo test", 0, cut) is None
