"""What a test command ran, read from its output: how many tests passed, failed or were skipped, and whether
it ran none at all. A run of zero tests exits 0 with most runners (node --test, cargo test, go test, mocha);
read as a pass it would let a task finish with no module and no test. Each runner the project knows
(agent/checks/project.py) is read by the summary it prints, whatever command wrapped it (`npm test`, `make test`)."""

from __future__ import annotations

import re

from pydantic import BaseModel

CUT_MARK = "bytes of output cut"  # tools/shell.py's CappedOutput: the middle of the output is not there


class TestCount(BaseModel):
    """What ran. `none`: why no test ran (the runner found none, or skipped every one); None when tests ran
    or the output does not say. `unit`: what was counted (go test without -v counts packages)."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    none: str | None = None
    unit: str = "test"

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.errors


def read_count(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """What the run of `command` ran, from its exit status and output; None when the output names no count."""
    for reader in (_npm, _pytest, _unittest, _node, _cargo, _go, _jest, _mocha, _maven, _gradle):
        count = reader(command, exit_code, output)
        if count is not None:
            if count.none is None and count.ran == 0:
                count.none = f"every {count.unit} was skipped" if count.skipped else f"no {count.unit}s ran"
            return count
    return None


def describe(count: TestCount | None, exit_code: int | None, timed_out: bool = False) -> str:
    """One line saying what ran: "12 tests passed", "3 passed, 1 failed", "no tests ran (...)"."""
    if timed_out:
        return "timed out" + (f" after {_counted(count)}" if count and count.ran else "")
    if count is None:
        return "exit 0, the output gives no test count" if exit_code == 0 else f"failed (exit {exit_code})"
    if count.none:
        return f"no tests ran ({count.none})"
    if exit_code == 0 and not (count.failed or count.errors):
        return _plural(count.passed, count.unit) + " passed" + (f", {count.skipped} skipped" if count.skipped else "")
    told = _counted(count)
    return told if count.failed or count.errors else f"{told}, but it failed (exit {exit_code})"


def _counted(count: TestCount) -> str:
    errors = "error" if count.errors == 1 else "errors"
    parts = [(count.passed, "passed"), (count.failed, "failed"), (count.errors, errors), (count.skipped, "skipped")]
    unit = "" if count.unit == "test" else f" {count.unit}s"
    return ", ".join(f"{n} {word}" for n, word in parts if n) + unit


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _numbers(text: str) -> dict[str, int]:
    """ "3 passed, 1 failed, 2 skipped" -> {"passed": 3, "failed": 1, "skipped": 2}."""
    return {word: int(n) for n, word in re.findall(r"(\d+) ([a-z]+)", text)}


# --- the runners ---------------------------------------------------------------------------------------


def _npm(command: str, exit_code: int | None, output: str) -> TestCount | None:
    if re.search(r'Missing script: "?test"?', output):
        return TestCount(none="package.json has no test script")
    if "Error: no test specified" in output:
        return TestCount(none="package.json's test script is npm's placeholder, which runs nothing")
    return None


def _pytest(command: str, exit_code: int | None, output: str) -> TestCount | None:
    lines = re.findall(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran)(?: in [\d.]+s)", output, re.MULTILINE)
    if exit_code == 5 and ("pytest" in command or lines or "collected 0 items" in output):
        return TestCount(none="pytest collected no tests")
    if not lines:
        return None
    n = _numbers(lines[-1])
    return TestCount(
        passed=n.get("passed", 0) + n.get("xpassed", 0),
        failed=n.get("failed", 0),
        errors=n.get("error", 0) + n.get("errors", 0),
        skipped=n.get("skipped", 0) + n.get("xfailed", 0) + n.get("deselected", 0),
        none="pytest collected no tests" if lines[-1] == "no tests ran" else None,
    )


def _unittest(command: str, exit_code: int | None, output: str) -> TestCount | None:
    ran = re.findall(r"^Ran (\d+) tests? in [\d.]+s\s*\n+\s*(OK|FAILED|NO TESTS RAN)(.*)$", output, re.MULTILINE)
    if not ran:
        return None
    total, _verdict, rest = ran[-1]
    n = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)}
    failed, errors, skipped = n.get("failures", 0), n.get("errors", 0), n.get("skipped", 0)
    passed = max(int(total) - failed - errors - skipped - n.get("expected_failures", 0), 0)
    none = "unittest found no tests" if int(total) == 0 else None
    return TestCount(passed=passed, failed=failed, errors=errors, skipped=skipped, none=none)


def _node(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """node --test's summary, in its TAP (`# tests 3`) and spec (`\\u2139 tests 3`) reporters."""
    n = dict(re.findall(r"^(?:#|\u2139) (tests|pass|fail|skipped|todo|cancelled) (\d+)\s*$", output, re.MULTILINE))
    if "tests" not in n:
        return None
    if int(n["tests"]) == 0:
        return TestCount(none="node --test found no test files")
    skipped = int(n.get("skipped", 0)) + int(n.get("todo", 0))
    return TestCount(
        passed=int(n.get("pass", 0)), failed=int(n.get("fail", 0)) + int(n.get("cancelled", 0)), skipped=skipped
    )


def _cargo(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """cargo test prints one `test result:` per test binary (and the doc-tests): the sum is what ran."""
    results = re.findall(
        r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; (\d+) filtered out",
        output,
        re.MULTILINE,
    )
    if not results or CUT_MARK in output:
        return None
    passed, failed, ignored, filtered = (sum(int(r[i]) for r in results) for i in range(4))
    none = "cargo test found no #[test] functions" if passed + failed + ignored + filtered == 0 else None
    return TestCount(passed=passed, failed=failed, skipped=ignored + filtered, none=none)


def _go(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """go test: one line per package (`ok`, `FAIL`, `?  [no test files]`); with -v, one per test too."""
    empty = re.findall(r"^\?\s+\S+\s+\[no test files\]", output, re.MULTILINE)
    ok = re.findall(r"^ok\s+\S+.*$", output, re.MULTILINE)
    failed = re.findall(r"^FAIL\s+\S+\s", output, re.MULTILINE)
    nothing = "matched no packages" in output or "no packages to test" in output
    if not (empty or ok or failed or nothing) or CUT_MARK in output:
        return None
    tests = dict.fromkeys(("PASS", "FAIL", "SKIP"), 0)
    for verdict in re.findall(r"^\s*--- (PASS|FAIL|SKIP): ", output, re.MULTILINE):
        tests[verdict] += 1
    if any(tests.values()):
        return TestCount(passed=tests["PASS"], failed=tests["FAIL"], skipped=tests["SKIP"])
    with_tests = [line for line in ok if "[no tests to run]" not in line]
    if not with_tests and not failed:
        return TestCount(none="go test found no test files" if not ok else "go test found no tests to run")
    return TestCount(passed=len(with_tests), failed=len(failed), unit="package")


def _jest(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """jest (`Tests: 1 failed, 2 passed, 3 total`) and vitest (`Tests  2 passed (2)`)."""
    if re.search(r"No tests found|No test files found", output):
        return TestCount(none="no test files found")
    found = re.findall(r"^\s*Tests:?\s+(\d+ [a-z]+.*)$", output, re.MULTILINE)
    if not found:
        return None
    n = _numbers(found[-1])
    return TestCount(
        passed=n.get("passed", 0), failed=n.get("failed", 0), skipped=n.get("skipped", 0) + n.get("todo", 0)
    )


def _mocha(command: str, exit_code: int | None, output: str) -> TestCount | None:
    passing = re.findall(r"^\s*(\d+) passing\b", output, re.MULTILINE)
    if not passing:
        return None
    failing = re.findall(r"^\s*(\d+) failing\b", output, re.MULTILINE)
    pending = re.findall(r"^\s*(\d+) pending\b", output, re.MULTILINE)
    return TestCount(
        passed=int(passing[-1]),
        failed=int(failing[-1]) if failing else 0,
        skipped=int(pending[-1]) if pending else 0,
    )


def _maven(command: str, exit_code: int | None, output: str) -> TestCount | None:
    """Maven's surefire: one `Tests run:` line per class, the last one the total."""
    if "No tests to run." in output:
        return TestCount(none="maven found no tests to run")
    found = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)", output)
    if not found:
        return None
    total, failed, errors, skipped = (int(x) for x in found[-1])
    return TestCount(passed=max(total - failed - errors - skipped, 0), failed=failed, errors=errors, skipped=skipped)


def _gradle(command: str, exit_code: int | None, output: str) -> TestCount | None:
    if re.search(r"^> Task \S*:test NO-SOURCE", output, re.MULTILINE):
        return TestCount(none="gradle found no test sources")
    return None
