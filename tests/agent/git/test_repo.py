"""Git helpers on real repositories: which paths count as work, exact staging, stash round trips, git that
runs nothing a repository planted, and repositories in the middle of an operation."""

from __future__ import annotations

import os
import subprocess

import git
import pytest

from agent.git import repo as gitrepo


@pytest.fixture
def repo(tmp_path):
    r = git.Repo.init(tmp_path)
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    (tmp_path / "c.py").write_text("c = 1\n")
    r.index.add(["a.py", "b.py", "c.py"])
    r.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return gitrepo.open_repo(tmp_path)


def test_dirty_paths_lists_work_and_skips_build_junk(repo, tmp_path):
    (tmp_path / "a.py").write_text("a = 2\n")
    (tmp_path / "b.py").unlink()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("")
    repo.git.mv("c.py", "renamed.py")
    assert gitrepo.dirty_paths(repo) == ["a.py", "b.py", "c.py", "notes/todo.txt", "renamed.py"]


def test_commit_paths_takes_names_literally(repo, tmp_path):
    (tmp_path / "[x].py").write_text("odd name\n")
    (tmp_path / "x.py").write_text("must stay uncommitted\n")
    sha = gitrepo.commit_paths(repo, ["[x].py"], "one file")
    assert sha and gitrepo.changed_since(repo, f"{sha}^", sha) == ["[x].py"]
    assert gitrepo.dirty_paths(repo) == ["x.py"]
    assert gitrepo.commit_paths(repo, [], "nothing") is None


def test_stash_round_trip_is_exact_including_the_index(repo, tmp_path):
    (tmp_path / "a.py").write_text("staged\n")
    repo.git.add("a.py")
    (tmp_path / "a.py").write_text("staged\nthen more, unstaged\n")
    (tmp_path / "b.py").unlink()
    (tmp_path / "new.txt").write_bytes(b"untracked \x00 bytes")
    sha = gitrepo.stash_paths(repo, gitrepo.dirty_paths(repo), "test")
    assert gitrepo.dirty_paths(repo) == [] and (tmp_path / "a.py").read_text() == "a = 1\n"
    assert gitrepo.restore_stash(repo, sha) == []
    assert (tmp_path / "a.py").read_text() == "staged\nthen more, unstaged\n"
    assert repo.git.show(":a.py") == "staged"  # the staged version is staged again
    assert not (tmp_path / "b.py").exists() and (tmp_path / "new.txt").read_bytes() == b"untracked \x00 bytes"
    assert repo.git.stash("list") == ""


def test_restore_refuses_a_clash_and_keeps_the_stash(repo, tmp_path):
    (tmp_path / "a.py").write_text("user work\n")
    (tmp_path / "u.txt").write_text("user file\n")
    sha = gitrepo.stash_paths(repo, gitrepo.dirty_paths(repo), "test")
    (tmp_path / "u.txt").write_text("someone else's file\n")  # would be overwritten by the stash
    assert gitrepo.restore_stash(repo, sha) == ["u.txt"]
    assert (tmp_path / "u.txt").read_text() == "someone else's file\n" and (tmp_path / "a.py").read_text() == "a = 1\n"
    assert repo.git.rev_parse("stash@{0}") == sha
    (tmp_path / "u.txt").unlink()
    (tmp_path / "a.py").write_text("moved on\n")
    gitrepo.commit_paths(repo, ["a.py"], "the branch moved on")
    assert gitrepo.restore_stash(repo, sha) == ["a.py"]  # a.py changed since the stash was made


def test_plain_git_runs_what_the_repository_planted(repo, tmp_path, traps):
    """The plant works: without the locked environment git runs it (so the tests below can fail)."""
    traps.plant(tmp_path)
    (tmp_path / "a.py").write_text("a = 2\n")
    git.Repo(tmp_path).git.commit("-qam", "plain git", "--no-verify")
    assert {"fsmonitor", "clean", "hook-post-commit", "hook-reference-transaction"} <= set(traps.ran())


def test_the_agents_git_runs_nothing_the_repository_configured(repo, tmp_path, traps):
    traps.plant(tmp_path)
    repo = gitrepo.open_repo(tmp_path)  # after the plant: the drivers it names are read at open
    (tmp_path / "a.py").write_text("a = 2\n")
    (tmp_path / "new.py").write_text("new\n")
    sha = gitrepo.stash_paths(repo, gitrepo.dirty_paths(repo), "test")
    repo.git.checkout("-q", "-b", "side")
    assert gitrepo.restore_stash(repo, sha) == []
    commit = gitrepo.commit_paths(repo, gitrepo.dirty_paths(repo), "work")
    assert gitrepo.diff_stat_since(repo, f"{commit}^", commit) and gitrepo.diff(repo, f"{commit}^", commit)
    repo.git.checkout("-q", "-")
    assert traps.ran() == []


def test_a_plain_subprocess_gets_the_same_lock(repo, tmp_path, traps):
    traps.plant(tmp_path)
    (tmp_path / "a.py").write_text("a = 2\n")
    env = {**os.environ, **gitrepo.locked_environment(tmp_path)}
    for args in (["status"], ["add", "-A"], ["commit", "-qm", "x"], ["diff", "HEAD~1"], ["checkout", "-q", "HEAD~1"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, capture_output=True, check=False)
    assert traps.ran() == []


def test_a_nested_repository_is_never_committed_nor_entered(repo, tmp_path, traps):
    sub = git.Repo.init(tmp_path / "sub")
    (tmp_path / "sub" / "f.txt").write_text("inside\n")
    sub.config_writer().set_value("core", "fsmonitor", f"{traps.cmd('nested-fsmonitor')}; false").release()
    (tmp_path / "top.txt").write_text("top\n")
    assert gitrepo.nested_repos(repo) == ["sub/"] and gitrepo.dirty_paths(repo) == ["top.txt"]
    sha = gitrepo.commit_all(repo, "work")
    assert [b.path for b in repo.commit(sha).tree.traverse()] == ["a.py", "b.py", "c.py", "top.txt"]
    assert gitrepo.dirty_paths(repo) == [] and traps.ran() == []


@pytest.mark.parametrize("state", ["merge", "rebase", "cherry-pick", "revert", "conflict"])
def test_an_unfinished_operation_is_named_with_its_fix(repo, tmp_path, state):
    base = repo.active_branch.name
    repo.git.checkout("-q", "-b", "other")
    (tmp_path / "a.py").write_text("a = 'other'\n")
    (tmp_path / "z.py").write_text("z\n")
    repo.git.add("a.py", "z.py")
    repo.git.commit("-qm", "other")
    repo.git.checkout("-q", base)
    (tmp_path / "a.py").write_text("a = 'mine'\n")
    repo.git.commit("-qam", "mine")
    fix = {
        "merge": "git merge --abort",
        "rebase": "git rebase --abort",
        "cherry-pick": "git cherry-pick --abort",
        "revert": "git revert --abort",
        "conflict": "resolve them",
    }[state]
    with pytest.raises(git.GitCommandError):
        if state == "merge":
            repo.git.merge("--no-edit", "other")
        elif state == "rebase":
            repo.git.rebase("other")
        elif state == "cherry-pick":
            repo.git.cherry_pick("other")
        elif state == "revert":
            repo.git.revert("--no-edit", "HEAD~1")  # "mine" changed the line "initial" set: a conflict
        else:
            (tmp_path / "a.py").write_text("a = 'stashed'\n")
            repo.git.stash()
            (tmp_path / "a.py").write_text("a = 'moved on'\n")
            repo.git.commit("-qam", "moved on")
            repo.git.stash("pop")
    with pytest.raises(gitrepo.RepoError, match=fix):
        gitrepo.check_ready(repo)


def test_a_clean_uncommitted_merge_is_refused(repo, tmp_path):
    repo.git.checkout("-q", "-b", "other")
    (tmp_path / "z.py").write_text("z\n")
    repo.git.add("z.py")
    repo.git.commit("-qm", "other")
    repo.git.checkout("-q", "-")
    repo.git.merge("--no-commit", "--no-ff", "other")
    with pytest.raises(gitrepo.RepoError, match="middle of a merge; finish it with `git commit`"):
        gitrepo.check_ready(repo)


def test_a_committed_submodule_is_never_entered(repo, tmp_path, traps):
    """Plain `git status` runs the submodule's fsmonitor and filter; the agent's git never looks inside."""
    sub = git.Repo.init(tmp_path / "sub")
    (tmp_path / "sub" / ".gitattributes").write_text("* filter=evil\n")
    (tmp_path / "sub" / "f.txt").write_text("f\n")
    sub.git.add("-A")
    sub.index.commit("sub", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    plain = git.Repo(tmp_path).git
    plain.add("sub")  # recorded as a gitlink, as `git submodule add` would
    plain.commit(
        "-qm",
        "with a submodule",
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    with sub.config_writer() as config:
        config.set_value("core", "fsmonitor", f"{traps.cmd('fsmonitor')}; false")
        config.set_value('filter "evil"', "clean", f"{traps.cmd('clean')}; cat")
    (tmp_path / "sub" / "f.txt").write_text("changed\n")
    (tmp_path / "a.py").write_text("a = 2\n")
    assert gitrepo.dirty_paths(repo) == ["a.py"]
    sha = gitrepo.stash_paths(repo, gitrepo.dirty_paths(repo), "test")
    repo.git.checkout("-q", "-b", "side")
    assert gitrepo.restore_stash(repo, sha) == [] and gitrepo.commit_paths(repo, ["a.py"], "work")
    assert traps.ran() == []
    plain.status()
    assert traps.ran(), "plain git does run them (the plant works)"
