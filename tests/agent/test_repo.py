"""Git helpers on real repositories: which paths count as work, exact staging, stash round trips."""

from __future__ import annotations

import git
import pytest

from agent import repo as gitrepo


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
