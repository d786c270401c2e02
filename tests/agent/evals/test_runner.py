"""`agent eval`'s runner on real folders, real git, the real sandbox and the real HumanEval data, with a
scripted model (the harness is under test; the real model's pass rates are measured by `agent eval` itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.core.errors import UserError
from agent.evals.humaneval import load_humaneval
from agent.evals.report import label_of, summarize, write_report
from agent.evals.runner import EvalSettings, read_records, run_suite
from agent.evals.tasks import load_folder_suite
from agent.settings.config import Config

SUITE = Path(__file__).parents[3] / "examples" / "eval" / "tasks"
FINISH = "<finish><summary>done</summary></finish>"
MEDIAN_FIX = (
    "<write_file>\n<path>stats.py</path>\n<content>\ndef mean(values):\n    return sum(values) / len(values)\n\n\n"
    "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
    "    if len(ordered) % 2:\n        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2\n</content>\n</write_file>"
)
MEDIAN_HALF_FIX = MEDIAN_FIX.replace(
    "    if len(ordered) % 2:\n        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2\n",
    "    return ordered[middle]\n",
)
CONFIG = Config(max_steps=4, attempts=1, mcp=False)


def median_task():
    return [t for t in load_folder_suite(SUITE) if t.id == "median-bug"]


@pytest.mark.slow  # runs whole suites of agent runs
def test_the_hidden_check_decides_not_the_agents_own_tests(scripted, tmp_path):
    """Both fixes pass the repository's own tests; only the right one passes the check the agent never saw."""
    records = run_suite(
        median_task(), [1, 2], CONFIG, scripted([MEDIAN_FIX, FINISH, MEDIAN_HALF_FIX, FINISH]), tmp_path
    )
    assert [(r.seed, r.passed, r.status) for r in records] == [(1, True, "finished"), (2, False, "finished")]
    assert "AssertionError" in records[1].check_tail
    assert [(r.tests_passed, r.tests_ran, r.named_missing) for r in records] == [(True, True, [])] * 2
    summary = summarize("x", records)  # both finished with their tests passing; one was right
    assert (summary.finished_right, summary.finished_with_tests, summary.vacuous_finishes) == (1, 2, 0)
    work = tmp_path / "work" / "median-bug-s1"
    assert not list(work.glob("eval_hidden_*")) and not (work / ".eval-check.sh").exists(), "check files removed"


@pytest.mark.slow  # runs a new project's set-up and its tests
def test_a_result_without_the_named_module_or_any_test_is_recorded_as_such(scripted, tmp_path):
    """The vacuous pass of issue 38: only a package.json whose `node --test` finds no test file. Whatever the
    run's end, the record says no test ran and the named module is missing; a "finished" counts as vacuous."""
    task = [t for t in load_folder_suite(SUITE) if t.id == "slugify-node"]
    package = (
        '<write_file>\n<path>package.json</path>\n<content>\n{"name": "slugify", "scripts": {"test": "node --test"}}\n'
        "</content>\n</write_file>"
    )
    [record] = run_suite(task, [1], CONFIG, scripted([package, FINISH]), tmp_path)
    assert not record.passed and record.tests_ran is False and record.named_missing == ["slugify.js"]
    assert summarize("x", [record]).vacuous_finishes == (record.status == "finished")


@pytest.mark.slow  # runs whole suites of agent runs
def test_a_stopped_suite_resumes_where_it_stopped(scripted, tmp_path):
    run_suite(median_task(), [1], CONFIG, scripted([MEDIAN_FIX, FINISH]), tmp_path)
    results = tmp_path / "results.jsonl"
    with results.open("a") as fh:
        fh.write('{"task": "median-bug", "seed": 2, "mo')  # a line cut by Ctrl-C: that pair runs again
    backend = scripted([MEDIAN_HALF_FIX, FINISH])
    records = run_suite(median_task(), [1, 2], CONFIG, backend, tmp_path)
    assert [(r.seed, r.passed) for r in records] == [(1, True), (2, False)] and len(backend.calls) == 2
    assert len(read_records(results)) == 2


@pytest.mark.slow  # runs the HumanEval problems' own tests
def test_humaneval_problems_become_repository_tasks_checked_by_their_own_tests(scripted, tmp_path):
    tasks = load_humaneval(subset=True)
    assert len(tasks) == 40 and tasks[1].id == "HumanEval-4" and len(load_humaneval()) == 164
    task = tasks[0]  # HumanEval/0: has_close_elements
    stub = task.start_files["solution.py"]
    right = stub.replace(
        "    raise NotImplementedError\n",
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
    )
    wrong = stub.replace("    raise NotImplementedError\n", "    return False\n")
    replies = [f"```python\n{code}```" for code in (right, wrong)]  # one-shot answers: the file whole
    records = run_suite([task], [1, 2], CONFIG, scripted(replies), tmp_path)
    assert [r.passed for r in records] == [True, False]


@pytest.mark.slow  # runs whole suites of agent runs
def test_the_report_and_compare_put_runs_side_by_side(scripted, tmp_path):
    records = run_suite(
        median_task(), [1, 2], CONFIG, scripted([MEDIAN_FIX, FINISH, MEDIAN_HALF_FIX, FINISH]), tmp_path / "a"
    )
    settings = EvalSettings(suite="tasks", mode="agent", backend="scripted", max_steps=4, temperature=0.2)
    (tmp_path / "a" / "settings.json").write_text(settings.model_dump_json())
    paths = write_report(tmp_path / "a", settings, records)
    summary = json.loads(paths["json"].read_text())["summary"]
    assert summary["passed"] == 1 and summary["per_seed"] == {"1": 1.0, "2": 0.0}
    assert "| median-bug | 2 | no |" in paths["markdown"].read_text() and paths["chart"].stat().st_size > 1000
    assert summarize("x", records).wall_per_solved == pytest.approx(sum(r.wall_seconds for r in records))
    out = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "a"), "--out", str(tmp_path)])
    assert out.exit_code == 0 and out.output.count("| a: agent · scripted | 1/2 | 50.0%") == 2
    assert (tmp_path / "compare.png").is_file()


def test_bad_suites_and_seeds_are_one_line_errors(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["eval", "run", str(tmp_path / "nope")])
    assert out.exit_code == 1 and "is not a folder" in out.output
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.md").write_text("do it")
    out = runner.invoke(app, ["eval", "run", str(tmp_path / "t")])
    assert out.exit_code == 1 and "has no check.sh" in out.output
    out = runner.invoke(app, ["eval", "run", "humaneval-40", "--seeds", "1,x"])
    assert out.exit_code == 1 and "--seeds '1,x'" in out.output
    out = runner.invoke(app, ["eval", "compare", str(tmp_path)])
    assert out.exit_code == 1 and "not a results folder" in out.output
    out = runner.invoke(app, ["eval", "run", "humaneval", "--tasks", "HumanEval-0,HumanEval-999"])
    assert out.exit_code == 1 and "--tasks: no task HumanEval-999 in this suite (its ids: HumanEval-0" in out.output


def test_tasks_chooses_by_id_in_the_suites_order():
    from agent.commands.eval import _chosen, load_suite

    chosen = _chosen(load_suite("humaneval"), "HumanEval-108, HumanEval-100")
    assert [t.id for t in chosen] == ["HumanEval-100", "HumanEval-108"]
    assert len(_chosen(load_suite("humaneval"), None)) == 164


@pytest.mark.model
def test_the_cli_runs_a_real_model_and_reports_what_holds_at_any_seed(tmp_path, qwen_path):
    """The whole path on the real embedded model: one HumanEval problem answered in one reply, checked, reported.
    Whether it passes is the model's business (pass rates are measured, not asserted); the figures must be real."""
    out = tmp_path / "he"
    result = CliRunner().invoke(
        app, ["eval", "run", "humaneval-40", "--limit", "1", "--mode", "single-reply", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    (record,) = read_records(out / "results.jsonl")
    assert record.task == "HumanEval-0" and record.completion_tokens > 10 and record.prompt_tokens > 100
    assert record.passed == (record.check_tail == "")
    assert "single-reply · qwen2.5-coder-1.5b | " in result.output and (out / "chart.png").is_file()


@pytest.mark.slow  # runs whole suites of agent runs
def test_a_peer_agent_runs_in_the_task_folder_under_the_sandbox_and_gets_the_same_check(tmp_path):
    """--mode command: the peer (here a script standing in for mini-swe-agent) sees the task through EVAL_* and
    the same prepared repository; it cannot write outside it; the same hidden check decides."""
    outside = Path.home() / f".dflash-eval-escape-{tmp_path.name}"  # not under /tmp: the sandbox has its own
    peer = (
        'set -e; case "$EVAL_TASK" in *median*) ;; *) exit 3;; esac; test "$EVAL_SEED" = 3; '
        "sed -i 's/    return values\\[middle - 1\\]/    v = sorted(values); m = len(v) \\/\\/ 2; "
        "return v[m] if len(v) % 2 else (v[m - 1] + v[m]) \\/ 2/' stats.py; "
        f'touch {outside} 2>/dev/null || true; echo \'{{"status": "finished", "steps": 7}}\''
    )
    config = CONFIG.model_copy(update={"endpoint": "http://127.0.0.1:9/v1"})
    (record,) = run_suite(median_task(), [3], config, None, tmp_path / "out", mode="command", agent_command=peer)
    assert record.passed and record.steps == 7 and record.status == "finished", record
    assert not outside.exists(), "the peer runs under the sandbox: no writes outside its folder"


def test_a_peer_that_dies_without_its_result_line_is_an_error_saying_why(tmp_path):
    """A venv under /tmp is not seen inside the sandbox (its own /tmp): the record must say what the peer said."""
    config = CONFIG.model_copy(update={"endpoint": "http://127.0.0.1:9/v1"})
    peer = "echo starting; echo 'No such file or directory: /tmp/peer/bin/python' >&2; exit 127"
    (record,) = run_suite(median_task(), [1], config, None, tmp_path / "out", mode="command", agent_command=peer)
    assert record.status == "error" and not record.passed
    assert record.error and "exit 127" in record.error and "/tmp/peer/bin/python" in record.error


def test_ctrl_c_keeps_the_results_reports_those_done_and_says_how_to_go_on(tmp_path, monkeypatch):
    import agent.evals.runner as runner

    arguments = ["eval", "run", str(SUITE), "--out", str(tmp_path / "o"), "--endpoint", "http://127.0.0.1:9/v1"]
    arguments += ["--mode", "command", "--agent-command", "true", "--seeds", "1,2"]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_one", interrupted)
    out = CliRunner().invoke(app, arguments)
    assert out.exit_code == 130 and "the same command goes on where it stopped" in out.output
    assert (tmp_path / "o" / "settings.json").is_file() and not (tmp_path / "o" / "report.md").exists()
    done = runner.EvalRecord(task="median-bug", seed=1, mode="command", passed=True, status="finished", steps=3)
    other = done.model_copy(update={"seed": 9})  # a seed this command does not ask for
    lines = [r.model_dump_json() + "\n" for r in (done, other)]
    (tmp_path / "o" / "results.jsonl").write_text("".join(lines))
    out = CliRunner().invoke(app, arguments)
    assert out.exit_code == 130 and "a report of the 1 done so far" in " ".join(out.output.split())
    report = (tmp_path / "o" / "report.md").read_text()
    assert (
        "| 1/1 |" in report and "| median-bug | 1 | yes | finished |" in report and "| median-bug | 9 |" not in report
    )


def test_a_folder_records_its_one_shot_settings_and_is_not_resumed_with_others(tmp_path, monkeypatch):
    import agent.evals.runner as runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_one", interrupted)
    arguments = ["eval", "run", str(SUITE), "--out", str(tmp_path / "o"), "--endpoint", "http://127.0.0.1:9/v1"]
    arguments += ["--mode", "command", "--agent-command", "true"]
    monkeypatch.setenv("DFLASH_AGENT_ONE_SHOT_NOTES", "true")
    assert CliRunner().invoke(app, arguments).exit_code == 130
    recorded = EvalSettings.model_validate_json((tmp_path / "o" / "settings.json").read_text())
    assert recorded.one_shot_notes and "true + notes · http" in label_of(recorded)
    monkeypatch.delenv("DFLASH_AGENT_ONE_SHOT_NOTES")
    out = CliRunner().invoke(app, arguments)
    assert out.exit_code == 1 and "one_shot_notes True); choose another --out" in " ".join(out.output.split())
    monkeypatch.setenv("DFLASH_AGENT_ONE_SHOT_NOTES", "true")
    monkeypatch.setenv("DFLASH_AGENT_ONE_SHOTS", str(recorded.one_shots + 1))
    out = CliRunner().invoke(app, arguments)
    assert out.exit_code == 1 and f"held: one_shots {recorded.one_shots})" in " ".join(out.output.split())


def planting_task(suite: Path) -> Path:
    """A task whose hidden check has a file at the top and one in a folder, and a check that only passes."""
    task = suite / "links"
    (task / "repo").mkdir(parents=True)
    (task / "check" / "hidden").mkdir(parents=True)
    (task / "task.md").write_text("Change nothing.")
    (task / "repo" / "README.md").write_text("nothing here\n")
    (task / "check" / "eval_hidden.py").write_text("HIDDEN TOP\n")
    (task / "check" / "hidden" / "test_x.py").write_text("HIDDEN DEEP\n")
    (task / "check.sh").write_text("cat eval_hidden.py hidden/test_x.py\n")
    return suite


@pytest.mark.slow  # a whole agent run
def test_links_the_model_plants_do_not_redirect_the_hidden_checks_writes_or_deletes(scripted, tmp_path):
    """The model links a check file's name to a file outside, and the check's folder to a folder outside: the
    check writes neither there (nor deletes there afterwards), and fails, saying why."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("mine\n")
    (outside / "test_x.py").write_text("also mine\n")
    plant = (
        f"<bash>\n<command>ln -s {outside / 'precious.txt'} eval_hidden.py && ln -s {outside} hidden</command>\n</bash>"
    )
    tasks = load_folder_suite(planting_task(tmp_path / "suite"))
    (record,) = run_suite(tasks, [1], CONFIG, scripted([plant, FINISH]), tmp_path / "out")
    assert (outside / "precious.txt").read_text() == "mine\n" and (outside / "test_x.py").read_text() == "also mine\n"
    assert not record.passed and "could not be written" in record.check_tail and "symlink" in record.check_tail
    work = tmp_path / "out" / "work" / "links-s1"
    assert (work / "eval_hidden.py").is_symlink() or not (work / "eval_hidden.py").exists()


@pytest.mark.slow  # a whole agent run
def test_the_hidden_check_removes_its_files_without_following_a_link_swapped_in_by_the_check(scripted, tmp_path):
    """The check runs the model's code: it replaces the check's folder by a link to a folder outside after the
    files were written; removing the check files afterwards must not delete the file of that name there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_x.py").write_text("mine\n")
    suite = planting_task(tmp_path / "suite")
    (suite / "links" / "check.sh").write_text(f"rm -rf hidden && ln -s {outside} hidden\n")
    (record,) = run_suite(load_folder_suite(suite), [1], CONFIG, scripted([FINISH]), tmp_path / "out")
    assert record.passed, record
    assert (outside / "test_x.py").read_text() == "mine\n"


def test_a_task_folder_with_a_link_out_of_it_is_refused_in_one_line(tmp_path):
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY")
    suite = planting_task(tmp_path / "suite")
    (suite / "links" / "repo" / "key").symlink_to(secret)
    with pytest.raises(UserError, match="key is a link to"):
        load_folder_suite(suite)
    no_model = ["--mode", "command", "--agent-command", "true", "--endpoint", "http://127.0.0.1:9/v1"]
    out = CliRunner().invoke(app, ["eval", "run", str(suite), "--out", str(tmp_path / "out"), *no_model])
    assert out.exit_code == 1 and "is a link to" in out.output and "outside" in out.output, out.output
    assert "Traceback" not in out.output and "PRIVATE KEY" not in out.output
    assert not (tmp_path / "out" / "results.jsonl").exists()

    (suite / "links" / "repo" / "key").unlink()
    (suite / "links" / "task.md").unlink()
    (suite / "links" / "task.md").symlink_to(secret)  # the prompt itself
    with pytest.raises(UserError, match="is a link to"):
        load_folder_suite(suite)

    (suite / "links" / "task.md").unlink()
    (suite / "links" / "task.md").write_text("Change nothing.")
    (suite / "links" / "check" / "same.py").symlink_to("eval_hidden.py")  # a link within the task: fine
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "repo").mkdir(parents=True)
    (elsewhere / "task.md").write_text("x")
    (elsewhere / "check.sh").write_text("true")
    (suite / "other").symlink_to(elsewhere)  # a task folder that is a link out of the suite
    with pytest.raises(UserError, match="other is a link to"):
        load_folder_suite(suite)
    (suite / "other").unlink()
    (task,) = load_folder_suite(suite)
    assert task.check_files["same.py"] == "HIDDEN TOP\n"


def test_a_peer_command_naming_a_file_from_where_it_was_typed_finds_it_in_every_task_folder(tmp_path, monkeypatch):
    """The peer runs in each task's folder; `python examples/eval/peer.py`, typed in the checkout as docs/eval.md
    shows, names a file relative to where it was typed, so the CLI makes it absolute (it failed every task)."""
    import shutil

    home = Path.home() / f".dflash-eval-peer-{tmp_path.name}"  # not under /tmp: the sandbox has its own
    (home / "peers").mkdir(parents=True)
    try:
        script = "import json; print('ran'); print(json.dumps({'status': 'finished', 'steps': 2}))\n"
        (home / "peers" / "peer.py").write_text(script)
        monkeypatch.chdir(home)
        out = tmp_path / "o"
        arguments = ["eval", "run", str(SUITE), "--tasks", "median-bug", "--out", str(out), "--seeds", "1"]
        arguments += ["--endpoint", "http://127.0.0.1:9/v1", "--mode", "command", "--agent-command"]
        result = CliRunner().invoke(app, [*arguments, "python3 peers/peer.py"])
        assert result.exit_code == 0, result.output
        (record,) = read_records(out / "results.jsonl")
        assert record.error is None and record.steps == 2 and record.status == "finished", record
        settings = json.loads((out / "settings.json").read_text())
        assert settings["agent_command"] == f"python3 {home / 'peers' / 'peer.py'}"
    finally:
        shutil.rmtree(home, ignore_errors=True)
