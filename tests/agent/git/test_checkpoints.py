"""Checkpoints, undo and the user's uncommitted work, on real git repositories with a scripted model (the
real model drives a run end to end in test_refactor.py and test_workflows.py)."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.git.checkpoints import agent_branches, branch_name, is_agent_commit, undo
from agent.settings.config import Config
from agent.workflows.runs import RunInterrupted, resume_run, run_task

WRITE_B = "I will add b.py with a helper. More words.\n<write_file>\n<path>b.py</path>\n<content>\ndef helper():\n    return 2\n</content>\n</write_file>"
EDIT_A = "Now set x to 2 in a.py.\n<edit_file>\n<path>a.py</path>\n<old>x = 1</old>\n<new>x = 2</new>\n</edit_file>"
LIST = "<list_files></list_files>"
FINISH = "<finish><summary>added b.py, x is 2</summary></finish>"
START = {"a.py": "x = 1\n", "keep.txt": "unchanged\n"}


def make_repo(path, files=START, gitignore=True):
    path.mkdir(exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)
    if gitignore:
        (path / ".gitignore").write_text("__pycache__/\n")
    repo = git.Repo.init(path, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return repo


def contents(path):
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
    }


def test_each_step_that_changes_files_is_a_checkpoint_saying_what_and_why(scripted, tmp_path):
    repo = make_repo(tmp_path / "r")
    start = repo.head.commit.hexsha
    result = run_task(
        tmp_path / "r", "Add a helper and set x to 2", Config(), backend=scripted([WRITE_B, LIST, EDIT_A, FINISH])
    )
    report = result.git
    assert report.branch.startswith("agent/add-a-helper-and-set-x-") and repo.active_branch.name == report.branch
    assert [c.step for c in report.checkpoints] == [1, 3], "step 2 changed nothing: no checkpoint"
    first, second = (repo.commit(c.commit) for c in report.checkpoints)
    assert first.summary == "agent step 1: I will add b.py with a helper."
    assert "Tool calls: write_file b.py" in first.message and "Files: b.py" in first.message
    assert second.summary == "agent step 3: Now set x to 2 in a.py." and "edit_file a.py" in second.message
    assert is_agent_commit(second) and second.parents[0] == first and first.parents[0].hexsha == start
    assert repo.heads.main.commit.hexsha == start, "the start branch never moves"
    assert result.files == ["a.py", "b.py"] and "2 files changed" in result.diff_stat
    assert result.commit == second.hexsha and (tmp_path / "r" / "a.py").read_text() == "x = 2\n"


def test_undo_restores_each_previous_checkpoint_exactly(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    before = contents(path)
    result = run_task(path, "task", Config(), backend=scripted([WRITE_B, EDIT_A, FINISH]))
    after_step_1 = {**before, "b.py": b"def helper():\n    return 2\n"}
    after_step_2 = {**after_step_1, "a.py": b"x = 2\n"}
    assert contents(path) == after_step_2
    done = undo(path)
    assert done.undone == result.git.checkpoints[1].commit and done.files == ["a.py"] and done.checked_out
    assert contents(path) == after_step_1
    undo(path)
    assert contents(path) == before and repo.head.commit.hexsha == result.git.start_commit
    with pytest.raises(ValueError, match="not an agent checkpoint"):
        undo(path)  # the user's own commit is never undone
    repo.git.execute(["git", "reset", "--hard", result.git.checkpoints[1].commit])  # the printed redo command works
    assert contents(path) == after_step_2


def test_undo_never_overwrites_uncommitted_work(scripted, tmp_path):
    path = tmp_path / "r"
    make_repo(path)
    run_task(path, "task", Config(), backend=scripted([WRITE_B, FINISH]))
    (path / "b.py").write_text("my own edit\n")
    with pytest.raises(ValueError, match="uncommitted changes in b.py"):
        undo(path)
    assert (path / "b.py").read_text() == "my own edit\n"


def test_undo_on_a_branch_that_is_not_checked_out_moves_only_the_branch(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    result = run_task(path, "task", Config(), backend=scripted([WRITE_B, EDIT_A, FINISH]))
    repo.git.checkout("main")
    assert agent_branches(repo) == [result.git.branch]
    done = undo(path, result.git.branch)
    assert not done.checked_out and repo.heads[result.git.branch].commit.hexsha == result.git.checkpoints[0].commit
    assert contents(path) == {".gitignore": b"__pycache__/\n", **{k: v.encode() for k, v in START.items()}}


def test_undo_cli_says_what_happened(scripted, tmp_path):
    path = tmp_path / "r"
    make_repo(path)
    run_task(path, "task", Config(), backend=scripted([WRITE_B, FINISH]))
    result = CliRunner().invoke(app, ["undo", "--repo", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "agent step 1: I will add b.py" in result.output and "to redo: git reset --hard" in result.output
    assert not (path / "b.py").exists()
    again = CliRunner().invoke(app, ["undo", "--repo", str(path)], env={"COLUMNS": "200"})
    assert again.exit_code == 1 and "not an agent checkpoint" in again.output


def test_a_dirty_tree_is_stashed_and_restored_exactly(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path, {**START, "gone.txt": "to be deleted\n", "staged.txt": "v1\n"})
    (path / "a.py").write_text("x = 1\n# my unfinished edit\n")
    (path / "staged.txt").write_text("v2 staged\n")
    repo.git.add("staged.txt")
    (path / "gone.txt").unlink()
    (path / "notes").mkdir()
    (path / "notes" / "idea.md").write_text("untracked, never committed\n")
    before, start = contents(path), repo.head.commit.hexsha
    result = run_task(path, "Add a helper", Config(), backend=scripted([WRITE_B, FINISH]))
    assert contents(path) == before and repo.git.show(":staged.txt") == "v2 staged"
    assert repo.active_branch.name == "main" and repo.head.commit.hexsha == start and repo.git.stash("list") == ""
    assert any("restored on main" in n for n in result.git.notes) and result.git.stash is None
    committed = repo.commit(result.git.branch)
    assert result.git.files == ["b.py"], "the agent branch holds the agent's change and none of the user's work"
    assert committed.tree["a.py"].data_stream.read() == b"x = 1\n"


def test_a_dirty_tree_can_be_refused(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    (path / "a.py").write_text("mine\n")
    (path / "new.txt").write_text("mine too\n")
    with pytest.raises(ValueError, match="uncommitted changes"):
        run_task(path, "task", Config(dirty="refuse"), backend=scripted([WRITE_B, FINISH]))
    assert (path / "a.py").read_text() == "mine\n" and (path / "new.txt").read_text() == "mine too\n"
    assert [h.name for h in repo.heads] == ["main"]


def test_stashed_work_that_clashes_with_the_run_stays_in_the_stash(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    (path / "a.py").write_text("x = 1  # mine\n")
    result = run_task(path, "task", Config(current_branch=True), backend=scripted([EDIT_A, FINISH]))
    assert repo.active_branch.name == "main" and (path / "a.py").read_text() == "x = 2\n"
    assert result.git.stash and "kept in the stash" in " ".join(result.git.notes)
    repo.git.checkout(result.git.start_commit, "--", "a.py")
    repo.git.stash("pop")  # the user's work is all there
    assert (path / "a.py").read_text() == "x = 1  # mine\n"


def test_squash_leaves_one_commit_that_undo_takes_back(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    result = run_task(
        path, "Add a helper and set x", Config(checkpoints="squash"), backend=scripted([WRITE_B, EDIT_A, FINISH])
    )
    head = repo.head.commit
    assert (
        result.git.squashed and len(result.git.checkpoints) == 1 and head.parents[0].hexsha == result.git.start_commit
    )
    assert head.summary == "agent: Add a helper and set x" and "Squashed 2 checkpoints" in head.message
    assert "agent step 1: I will add b.py" in head.message and is_agent_commit(head)
    undo(path)
    assert not (path / "b.py").exists() and (path / "a.py").read_text() == "x = 1\n"


def test_current_branch_mode_commits_on_the_checked_out_branch(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    result = run_task(path, "task", Config(current_branch=True), backend=scripted([WRITE_B, FINISH]))
    assert result.git.branch == "main" and [h.name for h in repo.heads] == ["main"]
    assert repo.heads.main.commit.hexsha == result.git.checkpoints[0].commit


def test_build_junk_is_never_committed_even_without_gitignore(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path, {"mod.py": "X = 1\n"}, gitignore=False)
    run = "<bash>\n<command>mkdir -p __pycache__ .venv && touch __pycache__/mod.cpython-311.pyc .venv/x</command>\n</bash>"
    result = run_task(path, "task", Config(), backend=scripted([run, WRITE_B, FINISH]))
    assert (path / "__pycache__").is_dir()
    assert result.files == ["b.py"] and [c.step for c in result.git.checkpoints] == [2]
    assert {b.path for b in repo.head.commit.tree.traverse()} == {"mod.py", "b.py"}


def test_an_interrupted_run_keeps_its_work_and_gives_back_the_users(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    (path / "keep.txt").write_text("my edit\n")

    class Interrupted(scripted):
        def complete(self, messages, *args, **kwargs):
            if self.calls:  # Ctrl-C during the second turn
                raise KeyboardInterrupt
            return super().complete(messages, *args, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        run_task(path, "task", Config(), backend=Interrupted([WRITE_B]))
    assert repo.active_branch.name == "main" and (path / "keep.txt").read_text() == "my edit\n"
    work = [h for h in repo.heads if h.name.startswith("agent/")]
    assert len(work) == 1 and "b.py" in {b.path for b in work[0].commit.tree.traverse()}


def test_branch_names_are_valid_git_refs():
    assert (
        branch_name("agent/{slug}-{id}", "Rename calc_total to compute_total, everywhere!", "ab12cd")
        == "agent/rename-calc-total-to-compute-total-ab12cd"
    )
    assert branch_name("agent/{slug}-{id}", "...", "ab12cd") == "agent/task-ab12cd"
    for name in [branch_name("x/../{slug}.lock", "a b", "1"), branch_name("~^:{id}//y", "t", "2")]:
        assert git.Git().check_ref_format("--branch", name)


def test_squashing_steps_that_cancel_out_leaves_no_commit(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    back = EDIT_A.replace("<old>x = 1</old>", "<old>TMP</old>").replace("<new>x = 2</new>", "<new>x = 1</new>")
    there = EDIT_A.replace("<new>x = 2</new>", "<new>TMP</new>")
    result = run_task(path, "task", Config(checkpoints="squash"), backend=scripted([there, back, FINISH]))
    assert result.git.squashed and result.git.checkpoints == [] and result.git.head is None
    assert repo.head.commit.hexsha == result.git.start_commit and result.files == []


def test_the_agents_git_runs_nothing_a_repository_planted(scripted, tmp_path, traps):
    """Hooks, fsmonitor (in the repo and in a nested one) and filter/diff/merge drivers never run, through run
    start (stash), checkpoints, finish (checkout, stash apply), undo and resume."""
    path = tmp_path / "r"
    repo = make_repo(path)
    traps.plant(path)
    git.Repo.init(path / "sub")
    (path / "sub" / "f.txt").write_text("inside\n")
    with git.Repo(path / "sub").config_writer() as config:
        config.set_value("core", "fsmonitor", f"{traps.cmd('nested-fsmonitor')}; false")
    (path / "a.py").write_text("x = 1\n# mine\n")  # the user's work: stashed at start, restored at the end
    result = run_task(path, "task", Config(), backend=scripted([WRITE_B, FINISH]))
    assert repo.active_branch.name == "main" and (path / "a.py").read_text() == "x = 1\n# mine\n"
    committed = {b.path for b in repo.commit(result.git.branch).tree.traverse()}
    assert "b.py" in committed and not any(p.startswith("sub") for p in committed), "no gitlink, nothing of sub"
    assert any(n.startswith("sub/ is a git repository of its own: not committed") for n in result.git.notes)
    assert (path / "sub" / "f.txt").read_text() == "inside\n"
    resumed = resume_run(Path(result.transcript), Config(), backend=scripted([EDIT_A, FINISH]))
    assert resumed.git.branch == result.git.branch and resumed.git.files == ["a.py"]
    assert repo.active_branch.name == "main" and (path / "a.py").read_text() == "x = 1\n# mine\n", "back home"
    undo(path, result.git.branch)
    assert traps.ran() == []


def test_a_run_in_the_middle_of_a_merge_is_refused_and_loses_nothing(tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    repo.git.checkout("-q", "-b", "other")
    (path / "z.py").write_text("z\n")
    repo.git.add("z.py")
    repo.git.commit("-qm", "other")
    repo.git.checkout("-q", "main")
    repo.git.merge("--no-commit", "--no-ff", "other")  # a clean merge, not yet committed
    result = CliRunner().invoke(
        app, ["run", "task", "--repo", str(path), "--endpoint", "http://127.0.0.1:9"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 1 and result.output.startswith("error: ") and "Traceback" not in result.output
    assert "in the middle of a merge" in result.output and "git merge --abort" in result.output
    assert (path / ".git" / "MERGE_HEAD").exists() and repo.git.diff("--cached", "--name-only") == "z.py"
    assert sorted(h.name for h in repo.heads) == ["main", "other"] and repo.active_branch.name == "main"


def test_a_failed_start_leaves_the_user_where_they_were(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    (path / "a.py").write_text("mine\n")

    class Broken(scripted):
        def complete(self, *args, **kwargs):
            raise RuntimeError("the engine died")

    with pytest.raises(RuntimeError, match="the engine died"):
        run_task(path, "task", Config(), backend=Broken([]))
    assert repo.active_branch.name == "main" and [h.name for h in repo.heads] == ["main"], "no empty agent branch"
    assert (path / "a.py").read_text() == "mine\n" and repo.git.stash("list") == ""


def test_ctrl_c_before_the_first_checkpoint_keeps_the_branch_for_the_resume(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)

    class Interrupted(scripted):
        def complete(self, *args, **kwargs):
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as stop:
        run_task(path, "task", Config(), backend=Interrupted([]))
    assert stop.value.branch in repo.heads and stop.value.branch.startswith("agent/"), (
        "a failure, not a Ctrl-C, drops it"
    )


def test_a_resume_that_fails_to_start_puts_the_user_back_and_keeps_the_run_branch(scripted, tmp_path):
    path = tmp_path / "r"
    repo = make_repo(path)
    first = run_task(path, "task", Config(), backend=scripted([WRITE_B, FINISH]))
    repo.git.checkout("-q", "main")

    class Broken(scripted):
        def complete(self, *args, **kwargs):
            raise RuntimeError("the engine died")

    with pytest.raises(RuntimeError):
        resume_run(Path(first.transcript), Config(), backend=Broken([]))
    assert repo.active_branch.name == "main" and repo.heads[first.git.branch].commit.hexsha == first.commit


def test_a_required_filter_of_the_repository_fails_the_checkpoint_and_loses_nothing(scripted, tmp_path, traps):
    """A driver the repository's own config marks required is not run: git refuses to commit, the run ends
    normally with a note, and the change stays in the working tree."""
    path = tmp_path / "r"
    repo = make_repo(path, {**START, ".gitattributes": "*.s filter=crypt\n"})
    with repo.config_writer() as config:
        config.set_value('filter "crypt"', "clean", f"{traps.cmd('clean')}; cat")
        config.set_value('filter "crypt"', "required", "true")
    write = "<write_file>\n<path>key.s</path>\n<content>\nsecret\n</content>\n</write_file>"
    result = run_task(path, "task", Config(), backend=scripted([write, FINISH]))
    assert result.run.status == "finished" and traps.ran() == []
    assert any("could not be committed" in n and "clean filter 'crypt' failed" in n for n in result.git.notes)
    assert (path / "key.s").read_text() == "secret\n" and "key.s" not in {
        b.path for b in repo.head.commit.tree.traverse()
    }


def test_a_resume_commits_only_on_an_agent_branch_the_repository_confirms(scripted, tmp_path):
    """A transcript is a file anyone could write: one naming `main` must not make the resumed run commit on main."""
    path = tmp_path / "r"
    repo = make_repo(path)
    first = run_task(path, "task", Config(), backend=scripted([LIST, FINISH]))
    repo.git.checkout("-q", "main")
    main_tip = repo.heads.main.commit.hexsha
    transcript = Path(first.transcript)
    lines = transcript.read_text().splitlines()
    start = json.loads(lines[0])
    start["branch"] = "main"
    transcript.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")

    resumed = resume_run(transcript, Config(), backend=scripted([WRITE_B, FINISH]))
    assert repo.heads.main.commit.hexsha == main_tip, "nothing committed on main"
    assert resumed.git.branch.startswith("agent/") and resumed.git.branch != "main"
    assert repo.heads[resumed.git.branch].commit.hexsha == resumed.commit and is_agent_commit(
        repo.commit(resumed.commit)
    )
    assert any("not an agent branch" in note for note in resumed.git.notes), resumed.git.notes

    start["branch"] = first.git.branch  # the run's own branch: the resume goes on committing there
    transcript.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    again = resume_run(transcript, Config(), backend=scripted([EDIT_A, FINISH]))
    assert again.git.branch == first.git.branch and repo.heads.main.commit.hexsha == main_tip
