"""Scripted refactors over real git repositories: a verified change is committed on its branch, a failing
one leaves the start branch untouched and no agent branch; the report says so. The end-to-end test at the
bottom lets the real model rename a function across two generated repos and checks the report is true."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.git.checkpoints import ATTEMPTS_REF
from agent.settings.config import Config
from agent.workflows.refactor import read_repos_file, refactor, write_report

INSTRUCTION = "Rename the function calc_total to compute_total everywhere (definition, imports and calls)."
SHOP = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "shop/pricing.py": "def calc_total(prices, tax=0.0):\n    return round(sum(prices) * (1 + tax), 2)\n",
    "shop/cart.py": (
        "from shop.pricing import calc_total\n\n\nclass Cart:\n    def __init__(self, tax=0.0):\n"
        "        self.items = []\n        self.tax = tax\n\n    def add(self, price):\n"
        "        self.items.append(price)\n\n    def total(self):\n        return calc_total(self.items, self.tax)\n"
    ),
    "tests/test_pricing.py": (
        "from shop.pricing import calc_total\n\n\ndef test_total():\n"
        "    assert calc_total([1, 2]) == 3\n    assert calc_total([10], tax=0.5) == 15\n"
    ),
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\ndef test_cart_total():\n    cart = Cart(tax=0.1)\n"
        "    cart.add(10)\n    cart.add(20)\n    assert cart.total() == 33\n"
    ),
}
OLD_FILES = ["shop/pricing.py", "shop/cart.py", "tests/test_pricing.py"]


def make_shop(path: Path, extra: dict[str, str] | None = None) -> git.Repo:
    return make_repo(path, {**SHOP, **(extra or {})})


def make_repo(path: Path, files: dict[str, str]) -> git.Repo:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    repo = git.Repo.init(path, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit("shop", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return repo


def rename_replies(files=OLD_FILES) -> list[str]:
    return rewrite_replies({f: SHOP[f] for f in files}, "calc_total", "compute_total")


def rewrite_replies(files: dict[str, str], old: str, new: str) -> list[str]:
    """The scripted model's replies: rewrite each file that has `old`, with `new` instead, then finish."""
    writes = "".join(
        f"<write_file>\n<path>{path}</path>\n<content>\n{text.replace(old, new)}</content>\n</write_file>\n"
        for path, text in files.items()
        if old in text
    )
    return [f"I will rename {old} in every file.\n{writes}", "<finish><summary>renamed</summary></finish>"]


def run_tests(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=path, capture_output=True, text=True
    )


def files_on(repo: git.Repo, ref: str) -> dict[str, bytes]:
    return {b.path: b.data_stream.read() for b in repo.commit(ref).tree.traverse() if b.type == "blob"}


def check_report_is_true(report, start: dict[str, str]) -> None:
    """Whatever the model did: passed means verified and committed on the branch; anything else means the
    start branch and its files are exactly as before and no agent branch is left."""
    for outcome in report.repos:
        path = Path(outcome.repo)
        repo = git.Repo(path)
        assert repo.active_branch.name == "main" and repo.heads.main.commit.hexsha == start[outcome.repo]
        assert not repo.is_dirty(untracked_files=True), f"{path.name}: the checkout is left as it was"
        agent_heads = [h.name for h in repo.heads if h.name != "main"]
        if outcome.status == "passed":
            assert agent_heads == [outcome.branch] and repo.heads[outcome.branch].commit.hexsha == outcome.commit
            assert outcome.verify and outcome.verify.passed and outcome.files
            repo.git.checkout(outcome.branch)
            check = subprocess.run(["bash", "-c", outcome.verify.command], cwd=path, capture_output=True, text=True)
            assert check.returncode == 0, f"{path.name}: marked passed, its branch must pass verification"
            repo.git.checkout("main")
        else:
            assert agent_heads == [] and outcome.branch is None and outcome.commit is None


@pytest.fixture
def shops(tmp_path):
    paths = []
    for name, extra in [
        ("good", None),
        (
            "legacy",
            {
                "tests/test_legacy.py": "from shop.pricing import calc_total\n\n\n"
                "def test_legacy():\n    assert calc_total([]) == 0\n"
            },
        ),
    ]:
        (tmp_path / name).mkdir()
        make_shop(tmp_path / name, extra)
        paths.append(tmp_path / name)
    return paths


@pytest.mark.slow
def test_a_verified_change_is_committed_and_a_failing_one_leaves_main_untouched(scripted, shops, tmp_path):
    start = {str(p): git.Repo(p).head.commit.hexsha for p in shops}
    before = {str(p): files_on(git.Repo(p), "main") for p in shops}
    report = refactor(INSTRUCTION, shops, Config(max_steps=4, attempts=1), backends=lambda: scripted(rename_replies()))
    good, legacy = report.repos
    assert (good.status, legacy.status) == ("passed", "failed")
    assert good.files == sorted(OLD_FILES)
    assert "3 files changed" in good.diff_stat and good.run_status == "finished" and good.steps == 2
    assert b"calc_total" not in b"".join(files_on(git.Repo(good.repo), good.branch).values())
    assert legacy.reason == "`python -m pytest -q` fails (1 error)" and "test_legacy" in legacy.verify.output_tail
    assert legacy.run_status == "step_limit", "finish was refused while the tests failed"
    assert sorted(legacy.files) == sorted(OLD_FILES) and legacy.steps == 4
    repo = git.Repo(legacy.repo)
    attempt = [r for r in repo.refs if r.path.startswith(ATTEMPTS_REF)]
    assert len(attempt) == 1 and attempt[0].path in " ".join(legacy.notes), "the failed attempt stays inspectable"
    for p in shops:
        assert files_on(git.Repo(p), "main") == before[str(p)]
    check_report_is_true(report, start)


@pytest.mark.slow
def test_attempts_that_were_all_undone_are_a_failure_not_unchanged(scripted, shops):
    """The legacy shop's change fails its tests; the next attempt starts from the undone state and changes
    nothing: the repo failed (its attempts stay inspectable), it was not left alone."""
    before = files_on(git.Repo(shops[1]), "main")
    report = refactor(
        INSTRUCTION, shops[1:], Config(max_steps=12, attempts=2), backends=lambda: scripted(rename_replies())
    )
    (legacy,) = report.repos
    assert legacy.status == "failed" and "no attempt passed" in legacy.reason, legacy
    repo = git.Repo(legacy.repo)
    assert files_on(repo, "main") == before
    assert any(r.path.startswith(ATTEMPTS_REF) for r in repo.refs), "the undone attempts stay inspectable"


@pytest.mark.slow
def test_custom_verify_command_and_unchanged_repos(scripted, shops):
    start = {str(p): git.Repo(p).head.commit.hexsha for p in shops}
    verify = "grep -rq compute_total shop && ! grep -rq calc_total shop"
    report = refactor(
        INSTRUCTION,
        shops[:1],
        Config(max_steps=3),
        verify=verify,
        backends=lambda: scripted(rename_replies(["shop/pricing.py", "shop/cart.py"])),
    )
    assert report.repos[0].status == "passed" and report.verify == verify
    assert run_tests(shops[0]).returncode == 0, "main still has its passing tests"
    idle = refactor(
        INSTRUCTION,
        shops[1:],
        Config(max_steps=3),
        backends=lambda: scripted(["<finish><summary>nothing</summary></finish>"]),
    )
    assert idle.repos[0].status == "unchanged" and idle.repos[0].files == []
    check_report_is_true(report, start)
    check_report_is_true(idle, start)


@pytest.mark.slow
def test_a_dirty_repo_gets_its_work_back_and_errors_are_reported(scripted, shops, tmp_path):
    good = shops[0]
    (good / "shop" / "pricing.py").write_text(SHOP["shop/pricing.py"] + "# my note\n")
    (good / "scratch.txt").write_text("mine\n")
    report = refactor(
        INSTRUCTION, [good, tmp_path / "missing"], Config(max_steps=3), backends=lambda: scripted(rename_replies())
    )
    ok, missing = report.repos
    assert ok.status == "passed" and any("restored on main" in n for n in ok.notes)
    assert (good / "shop" / "pricing.py").read_text().endswith("# my note\n") and (
        good / "scratch.txt"
    ).read_text() == "mine\n"
    assert b"# my note" not in files_on(git.Repo(good), ok.branch)["shop/pricing.py"]
    assert missing.status == "error" and "not a git repository" in missing.reason


@pytest.mark.slow
def test_parallel_runs_repos_at_once_with_a_backend_per_repo(scripted, tmp_path):
    paths = []
    for i in range(3):
        (tmp_path / f"s{i}").mkdir()
        make_shop(tmp_path / f"s{i}")
        paths.append(tmp_path / f"s{i}")
    running, peak, lock = [0], [0], threading.Lock()

    class Slow(scripted):
        def complete(self, *args, **kwargs):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.3)
            with lock:
                running[0] -= 1
            return super().complete(*args, **kwargs)

    report = refactor(INSTRUCTION, paths, Config(max_steps=3), parallel=3, backends=lambda: Slow(rename_replies()))
    assert [r.status for r in report.repos] == ["passed"] * 3 and report.parallel == 3 and peak[0] == 3
    assert [Path(r.repo).name for r in report.repos] == ["s0", "s1", "s2"], "the report keeps the given order"


@pytest.mark.slow
def test_report_files_and_cli(scripted, shops, tmp_path, monkeypatch):
    report = refactor(INSTRUCTION, shops, Config(max_steps=3), backends=lambda: scripted(rename_replies()))
    json_path, md_path = write_report(report, tmp_path / "out")
    data = json.loads(json_path.read_text())
    assert [r["status"] for r in data["repos"]] == ["passed", "failed"]
    for key in ["files", "diff_stat", "verify", "steps", "prompt_tokens", "completion_tokens", "seconds"]:
        assert key in data["repos"][0]
    md = md_path.read_text()
    assert "| good | passed | 3 | 2 |" in md and "## legacy: failed" in md and "test_legacy" in md
    listing = tmp_path / "repos.txt"
    listing.write_text("# the shops\ngood\n\n" + str(shops[1]) + "  # absolute\n")
    assert read_repos_file(listing) == [tmp_path / "good", shops[1]]
    none = CliRunner().invoke(app, ["refactor", "x"])
    assert none.exit_code == 1 and "no repositories" in none.output


@pytest.mark.slow
def test_refactor_cli_runs_the_repos_and_writes_the_report(scripted, shops, tmp_path, monkeypatch):
    import agent.workflows.refactor

    @contextmanager
    def scripted_backends(config, parallel, given):
        yield (lambda: scripted(rename_replies())), parallel, "scripted"

    monkeypatch.setattr(agent.workflows.refactor, "_backends", scripted_backends)
    (tmp_path / "repos.txt").write_text("legacy\n")
    result = CliRunner().invoke(
        app,
        [
            "refactor",
            INSTRUCTION,
            "--repos",
            str(shops[0]),
            "--repos-file",
            str(tmp_path / "repos.txt"),
            "--max-steps",
            "3",
            "--report",
            str(tmp_path / "rep"),
            "--json",
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert (
        "good: passed" in result.output and "legacy: failed" in result.output and "1 passed, 1 failed" in result.output
    )
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["repos"][1]["status"] == "failed"


NODE_SHOP = {
    "package.json": json.dumps({"name": "shop", "version": "1.0.0", "scripts": {"test": "node --test"}}),
    "pricing.js": "function calcTotal(prices) {\n  return prices.reduce((a, b) => a + b, 0);\n}\n\nmodule.exports = { calcTotal };\n",
    "pricing.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const { calcTotal } = require('./pricing');\n\ntest('total', () => assert.strictEqual(calcTotal([1, 2]), 3));\n"
    ),
}
RUST_SHOP = {
    ".gitignore": "target/\n",
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/lib.rs": (
        "pub fn calc_total(prices: &[i64]) -> i64 {\n    prices.iter().sum()\n}\n\n#[cfg(test)]\nmod tests {\n"
        "    use super::*;\n\n    #[test]\n    fn total() {\n        assert_eq!(calc_total(&[1, 2]), 3);\n    }\n}\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "files, old, new, command",
    [
        (NODE_SHOP, "calcTotal", "computeTotal", "npm test"),
        (RUST_SHOP, "calc_total", "compute_total", "cargo test"),
    ],
)
def test_node_and_rust_repos_are_verified_with_their_own_test_command(scripted, tmp_path, files, old, new, command):
    """Real node/cargo under the sandbox; before agent/checks/project.py these repos failed with 'no verification
    command found'. A rename verifies and is committed; a change that breaks the tests is not."""
    good, broken = tmp_path / "good", tmp_path / "broken"
    for path in (good, broken):
        path.mkdir()
        make_repo(path, files)
    start = {str(p): git.Repo(p).head.commit.hexsha for p in (good, broken)}
    report = refactor(
        f"Rename {old} to {new}.",
        [good],
        Config(max_steps=3),
        backends=lambda: scripted(rewrite_replies(files, old, new)),
    )
    assert report.repos[0].status == "passed" and report.repos[0].verify.command == command, report.repos[0]
    wrong = {path: text.replace("+ b", "- b").replace(".sum()", ".product()") for path, text in files.items()}
    failed = refactor(
        "Break it.", [broken], Config(max_steps=2), backends=lambda: scripted(rewrite_replies(wrong, "", ""))
    )
    outcome = failed.repos[0]
    assert outcome.status == "failed" and outcome.reason.startswith(f"`{command}` fails ("), outcome
    check_report_is_true(report, start)
    check_report_is_true(failed, start)


# what the test asserts holds at any step count and reply length (a rename is a few short edits; a runaway reply
# of the default 2,048 tokens costs minutes)
E2E_CONFIG = Config(n_ctx=8192, max_steps=2, max_tokens=384, command_timeout=60)
E2E_VERIFY = "python -m pytest -q && ! grep -rn --include='*.py' calc_total ."  # tests pass, no old name left
E2E_VARIANTS = {  # two small shops that use calc_total in different ways (two show "one at a time")
    "shop_b": {
        "shop/receipt.py": "from shop.pricing import calc_total\n\n\ndef receipt(prices):\n"
        '    return f"Total: {calc_total(prices):.2f}"\n',
        "tests/test_receipt.py": "from shop.receipt import receipt\n\n\ndef test_receipt():\n"
        '    assert receipt([1, 2]) == "Total: 3.00"\n',
    },
    "shop_c": {
        "shop/cart.py": "from shop import pricing\n\n\nclass Cart:\n    def __init__(self, tax=0.0):\n"
        "        self.items = []\n        self.tax = tax\n\n    def add(self, price):\n"
        "        self.items.append(price)\n\n    def total(self):\n"
        "        return pricing.calc_total(self.items, self.tax)\n"
    },
}


@pytest.mark.model
def test_real_model_renames_a_function_across_two_repos(tmp_path, qwen_path):
    """Two generated repos; the real embedded model renames calc_total everywhere. Whatever it did, the
    report must be true: each repo is checked by running its tests on the branch the report names."""
    paths = []
    for name, extra in E2E_VARIANTS.items():
        (tmp_path / name).mkdir()
        make_shop(tmp_path / name, extra)
        paths.append(tmp_path / name)
    start = {str(p): git.Repo(p).head.commit.hexsha for p in paths}
    notes: list[str] = []

    class Events:
        def on_note(self, text):
            notes.append(text)

        def on_repo_start(self, repo):
            return None

        def on_repo_done(self, outcome):
            print(
                f"{Path(outcome.repo).name}: {outcome.status} ({outcome.reason}) steps={outcome.steps} "
                f"tokens={outcome.prompt_tokens}/{outcome.completion_tokens} time={outcome.seconds:.0f}s",
                flush=True,
            )

    report = refactor(INSTRUCTION, paths, E2E_CONFIG, verify=E2E_VERIFY, parallel=2, events=Events())
    json_path, md_path = write_report(report, tmp_path / "report")
    print(md_path.read_text())
    assert report.parallel == 1 and "embedded" in report.backend and "one at a time" in notes[0]
    assert json.loads(json_path.read_text())["repos"][0]["repo"] == str(paths[0])
    check_report_is_true(report, start)
    for outcome in report.repos:
        repo = git.Repo(outcome.repo)
        if outcome.status == "passed":
            repo.git.checkout(outcome.branch)
            old = subprocess.run(["git", "grep", "-n", "calc_total"], cwd=outcome.repo, capture_output=True, text=True)
            print(f"{Path(outcome.repo).name}: calc_total left on the branch: {old.stdout.strip() or 'none'}")
            repo.git.checkout("main")
        assert outcome.steps >= 1 and outcome.seconds > 0 and outcome.transcript
    assert any(o.steps for o in report.repos)


def test_a_profile_server_gets_one_slot_per_parallel_repo():
    from agent.workflows.runtime import slotted
    from inference.profiles import BUILTIN_PROFILES

    base = BUILTIN_PROFILES["qwen-cpu"]
    assert slotted(base, 1) is base
    three = slotted(base, 3)
    assert (three.parallel, three.ctx_size) == (3, 3 * base.ctx_size), "each slot keeps the profile's context"
    assert slotted(base.model_copy(update={"kv_unified": True}), 2).ctx_size == base.ctx_size


@pytest.mark.model
def test_parallel_repos_share_one_llama_server_with_slots(engine, qwen_path, tmp_path):
    """Two repos at once against one llama-server started from a profile with two slots."""
    import platformdirs

    paths = []
    for name in ["p1", "p2"]:
        (tmp_path / name).mkdir()
        make_shop(tmp_path / name)
        paths.append(tmp_path / name)
    start = {str(p): git.Repo(p).head.commit.hexsha for p in paths}
    spans: dict[str, list[float]] = {}

    class Events:
        def on_note(self, text):
            pass

        def on_repo_start(self, repo):
            spans[repo.name] = [time.monotonic()]

        def on_repo_done(self, outcome):
            spans[Path(outcome.repo).name].append(time.monotonic())

    config = Config(profile="qwen-cpu", engine=engine.key, max_steps=2, max_tokens=256)
    report = refactor(INSTRUCTION, paths, config, parallel=2, events=Events())
    assert report.parallel == 2 and report.backend == "profile qwen-cpu, 2 slot(s)"
    assert max(s[0] for s in spans.values()) < min(s[1] for s in spans.values()), "the repos ran at the same time"
    logs = sorted(
        (Path(platformdirs.user_state_dir("dflash-agent")) / "logs").glob("llama-server-qwen-cpu-*.log"),
        key=lambda p: p.stat().st_mtime,
    )
    assert " -np 2 " in logs[-1].read_text().splitlines()[0] and f"--ctx-size {2 * 8192}" in logs[-1].read_text()
    assert all(r.steps >= 1 for r in report.repos)
    check_report_is_true(report, start)
