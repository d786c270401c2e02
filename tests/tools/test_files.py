"""File tools on real files: ranges, writes, exact edits, listing and search with .gitignore, escapes refused."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from tools.base import ToolContext, ToolPolicy
from tools.files import EditFileTool, ListFilesTool, ReadFileTool, SearchTool, WriteFileTool


@pytest.fixture
def ctx(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return ToolContext(workspace, ToolPolicy(max_read_lines=3))


def test_write_then_read_a_range(ctx):
    assert not WriteFileTool().invoke({"path": "pkg/a.py", "content": "1\n2\n3\n4\n5"}, ctx).is_error
    assert (ctx.workspace / "pkg/a.py").read_text() == "1\n2\n3\n4\n5\n"
    result = ReadFileTool().invoke({"path": "pkg/a.py", "start_line": 2, "end_line": 3}, ctx)
    assert result.output.endswith("2\n3") and "lines 2-3 of 5" in result.output


def test_read_caps_lines_and_says_how_to_get_more(ctx):
    (ctx.workspace / "long.txt").write_text("\n".join(str(i) for i in range(10)))
    result = ReadFileTool().invoke({"path": "long.txt"}, ctx)
    assert "lines 1-3 of 10" in result.output and "lines 4-10 not shown" in result.output


def test_read_refuses_binary_and_missing_files(ctx):
    (ctx.workspace / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    assert "binary" in ReadFileTool().invoke({"path": "blob.bin"}, ctx).output
    missing = ReadFileTool().invoke({"path": "nope.py"}, ctx)
    assert missing.is_error and "does not exist" in missing.output


def test_edit_replaces_exactly_one_occurrence(ctx):
    (ctx.workspace / "m.py").write_text("a = 1\nb = 2\n")
    result = EditFileTool().invoke({"path": "m.py", "old": "b = 2", "new": "b = 3"}, ctx)
    assert not result.is_error and "line 2" in result.output
    assert (ctx.workspace / "m.py").read_text() == "a = 1\nb = 3\n"


def test_edit_refuses_missing_and_ambiguous_text_helpfully(ctx):
    (ctx.workspace / "m.py").write_text("x = 1\nx = 1\n    y = 2\n")
    ambiguous = EditFileTool().invoke({"path": "m.py", "old": "x = 1", "new": "x = 2"}, ctx)
    assert ambiguous.is_error and "occurs 2 times" in ambiguous.output and "lines 1, 2" in ambiguous.output
    missing = EditFileTool().invoke({"path": "m.py", "old": "y = 2\nz = 3", "new": "q"}, ctx)
    assert missing.is_error and "not found" in missing.output and "line 3" in missing.output
    nothing = EditFileTool().invoke({"path": "m.py", "old": "x = 1", "new": "x = 1"}, ctx)
    assert nothing.is_error and "identical" in nothing.output
    assert (ctx.workspace / "m.py").read_text() == "x = 1\nx = 1\n    y = 2\n"


def test_edit_miss_on_a_short_file_shows_the_file(ctx):
    (ctx.workspace / "s.py").write_text("def f():\n    return 1\n")
    result = EditFileTool().invoke({"path": "s.py", "old": "return 2", "new": "return 3"}, ctx)
    assert "currently reads" in result.output and "return 1" in result.output


def test_list_and_search_respect_gitignore(ctx):
    ws = ctx.workspace
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "sub").mkdir()
    (ws / "sub/.gitignore").write_text("secret.txt\n")
    for name in ["main.py", "app.log", "build/out.py", "sub/keep.py", "sub/secret.txt", ".git/config"]:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("needle\n")
    listing = ListFilesTool().invoke({}, ctx).output.splitlines()
    assert listing == [".gitignore", "main.py", "sub/.gitignore", "sub/keep.py"]
    hits = SearchTool().invoke({"pattern": "need+le"}, ctx).output.splitlines()
    assert hits == ["main.py:1: needle", "sub/keep.py:1: needle"]


def test_search_reports_bad_regex(ctx):
    result = SearchTool().invoke({"pattern": "("}, ctx)
    assert result.is_error and "invalid regular expression" in result.output


@pytest.mark.parametrize("tool,args", [
    (ReadFileTool(), {"path": "../outside.txt"}),
    (ReadFileTool(), {"path": "/etc/passwd"}),
    (WriteFileTool(), {"path": "../../evil.txt", "content": "x"}),
    (EditFileTool(), {"path": "link/outside.txt", "old": "a", "new": "b"}),
    (ReadFileTool(), {"path": "escape.txt"}),
    (WriteFileTool(), {"path": "link/new.txt", "content": "x"}),
    (ListFilesTool(), {"path": ".."}),
    (SearchTool(), {"pattern": "a", "path": "link"}),
    (WriteFileTool(), {"path": ".git/hooks/pre-commit", "content": "x"}),
])
def test_every_path_escape_is_refused(ctx, tool, args):
    outside = ctx.workspace.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "outside.txt").write_text("a")
    (ctx.workspace.parent / "outside.txt").write_text("a")
    os.symlink(outside, ctx.workspace / "link")
    os.symlink(outside / "outside.txt", ctx.workspace / "escape.txt")
    result = tool.invoke(args, ctx)
    assert result.is_error
    assert "outside the workspace" in result.output or "inside .git" in result.output
    assert (outside / "outside.txt").read_text() == "a" and not (outside / "new.txt").exists()


def test_symlinked_file_outside_is_not_listed_or_searched(ctx):
    secret = ctx.workspace.parent / "secret.txt"
    secret.write_text("password\n")
    os.symlink(secret, ctx.workspace / "innocent.txt")
    (ctx.workspace / "ok.txt").write_text("password\n")
    assert ListFilesTool().invoke({}, ctx).output == "ok.txt"
    assert SearchTool().invoke({"pattern": "password"}, ctx).output == "ok.txt:1: password"


def test_read_only_sandbox_mode_refuses_writes_and_edits_but_reads(tmp_path):
    from tools.sandbox import SandboxPolicy

    (tmp_path / "a.txt").write_text("old\n")
    ctx = ToolContext(tmp_path, ToolPolicy(sandbox=SandboxPolicy(mode="read-only")))
    for tool, args in [(WriteFileTool(), {"path": "b.txt", "content": "x"}),
                       (EditFileTool(), {"path": "a.txt", "old": "old", "new": "new"})]:
        result = tool.invoke(args, ctx)
        assert result.is_error and "sandbox is read-only" in result.output
    assert not (tmp_path / "b.txt").exists() and (tmp_path / "a.txt").read_text() == "old\n"
    assert "old" in ReadFileTool().invoke({"path": "a.txt"}, ctx).output


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs: a real full disk (needs root to mount; skipped with the reason otherwise)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill ({done.stderr.strip()}); needs root")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


def test_disk_full_keeps_the_old_content_and_says_why(small_disk):
    from agent.session import Transcript

    ctx = ToolContext(small_disk)
    (small_disk / "app.py").write_text("print('original')\n")
    result = WriteFileTool().invoke({"path": "app.py", "content": "x = 1\n" * 40_000}, ctx)
    assert result.is_error and "No space left on device" in result.output
    assert (small_disk / "app.py").read_text() == "print('original')\n"  # not truncated
    assert [p.name for p in small_disk.iterdir()] == ["app.py"]  # no temporary file left behind
    edit = EditFileTool().invoke({"path": "app.py", "old": "original", "new": "y" * 100_000}, ctx)
    assert edit.is_error and (small_disk / "app.py").read_text() == "print('original')\n"

    transcript = Transcript(small_disk / "run.jsonl")
    for _ in range(200):
        transcript.write("note", text="z" * 1000)  # fills the disk: recorded, never raised
    transcript.close()
    assert transcript.error and "No space left" in transcript.error


def test_non_utf8_files_are_shown_but_never_rewritten(tmp_path):
    ctx = ToolContext(tmp_path)
    raw = "caf\u00e9 = 1\n".encode("latin-1")
    (tmp_path / "legacy.py").write_bytes(raw)
    shown = ReadFileTool().invoke({"path": "legacy.py"}, ctx)
    assert not shown.is_error and "not valid UTF-8" in shown.output
    edit = EditFileTool().invoke({"path": "legacy.py", "old": "= 1", "new": "= 2"}, ctx)
    assert edit.is_error and "not UTF-8" in edit.output
    assert (tmp_path / "legacy.py").read_bytes() == raw


def test_search_has_a_deadline_and_survives_backtracking_patterns(tmp_path, monkeypatch):
    import tools.files as files

    (tmp_path / "long.txt").write_text(("a" * 20_000 + "!\n") * 20)
    ctx = ToolContext(tmp_path)
    monkeypatch.setattr(files, "SEARCH_SECONDS", 3.0)
    for pattern in [r".*.*é", r"(x+)+é", r"(a|aa)*b", r"^(\w+\s?)*$"]:  # classic catastrophic cases for `re`
        started = time.monotonic()
        result = SearchTool().invoke({"pattern": pattern}, ctx)
        assert result.output.startswith("no matches") or "took longer than 3 s" in result.output
        assert time.monotonic() - started < 5
    monkeypatch.setattr(files, "SEARCH_SECONDS", 1e-6)
    slow = SearchTool().invoke({"pattern": r"^(\w+\s?)*$"}, ctx)
    assert slow.is_error and "took longer than" in slow.output


def test_ambiguous_rename_suggests_a_command_that_works(tmp_path):
    from tools.shell import BashTool

    ctx = ToolContext(tmp_path)
    (tmp_path / "a.py").write_text("def calc_total(x):\n    return x\n\ny = calc_total(1)\n")
    refused = EditFileTool().invoke({"path": "a.py", "old": "calc_total", "new": "compute_total"}, ctx)
    assert refused.is_error and "occurs 2 times" in refused.output
    command = refused.output.split("run with bash: ")[1]
    assert not BashTool().invoke({"command": command}, ctx).is_error
    assert (tmp_path / "a.py").read_text() == "def compute_total(x):\n    return x\n\ny = compute_total(1)\n"
