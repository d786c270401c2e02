"""Property-based fuzzing of every tool's argument model through `Tool.invoke` (and `Toolbox.run` behind the
approval gate), inside a workspace that sits next to an `outside` folder holding a sentinel secret.

Arguments are random dicts: the right keys and wrong ones, values of every JSON type, huge strings, NUL
bytes, lone surrogates, and paths built from `..`, `~`, absolute paths, and symlinks that lead outside,
to `/`, in a loop or nowhere. Properties: no exception escapes; every failure is an error `ToolResult`
with a message; nothing outside the workspace changes or appears, `.git` is never written by the file
tools, and the secret never shows up in a result. bash is fuzzed with harmless commands only (a small
alphabet, no redirections) and a short timeout. The cases tried are printed at the end of the module.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.core.loop import FinishTool
from skills.loader import discover_skills
from skills.tool import ActivateSkillTool
from tools.approval import ApprovalPolicy, Approver, analyse_command
from tools.base import Tool, Toolbox, ToolContext, ToolPolicy, ToolResult
from tools.files import file_tools
from tools.shell import BashTool

SECRET = f"SENTINEL-SECRET-{uuid.uuid4().hex}"
ESCAPE_NAME = f"dflash-fuzz-escape-{uuid.uuid4().hex[:12]}"
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

CASES: Counter[str] = Counter()
ESCAPES: Counter[str] = Counter()  # an exception escaped, or something outside the workspace changed


@pytest.fixture(scope="module", autouse=True)
def report_counts(report_fuzz_counts):
    yield
    report_fuzz_counts("tool argument fuzzing", CASES, ESCAPES)


class Arena:
    """root/outside (the sentinel, never to be touched) and root/workspace (with symlinks out)."""

    def __init__(self, root: Path):
        self.root, self.outside, self.workspace = root, root / "outside", root / "workspace"
        (self.outside / "dir").mkdir(parents=True)
        (self.outside / "sentinel.txt").write_text(SECRET + "\n")
        (self.outside / "dir" / "inner.txt").write_text(SECRET + " inner\n")
        ws = self.workspace
        (ws / "src").mkdir(parents=True)
        (ws / "a.txt").write_text("alpha\nbeta\n")
        (ws / "src" / "m.py").write_text("def f():\n    return 1\n")
        (ws / ".git").mkdir()
        (ws / ".git" / "config").write_text("[core]\n")
        (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (ws / "link_out").symlink_to(self.outside)
        (ws / "link_sentinel").symlink_to(self.outside / "sentinel.txt")
        (ws / "link_root").symlink_to("/")
        (ws / "link_loop").symlink_to("link_loop")
        (ws / "link_dangling").symlink_to(self.outside / "nope")
        (ws / "src" / "link_up").symlink_to("../..")
        (ws / ".a.txt.dflash-tmp").symlink_to(self.outside / "sentinel.txt")  # the former temporary name, planted
        (ws / "link_git").symlink_to(ws / ".git")
        (ws / "sub" / ".git" / "hooks").mkdir(parents=True)  # a nested repository
        (ws / "sub" / ".git" / "config").write_text("[core]\n")
        os.mkfifo(ws / "fifo")  # reading it must not block
        skill = ws / ".agents" / "skills" / "demo"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: demo\ndescription: a demo skill\n---\nDo the demo.\n")
        (skill / "ref.md").write_text("reference\n")
        self.escape_targets = [
            Path("/tmp") / ESCAPE_NAME,
            Path.home() / ESCAPE_NAME,
            root / ESCAPE_NAME,
            self.outside / ESCAPE_NAME,
        ]
        self.before = self.snapshot_outside()
        self.git_before = self.snapshot(ws / ".git"), self.snapshot(ws / "sub" / ".git")

    @staticmethod
    def snapshot(folder: Path, skip: Path | None = None) -> dict[str, tuple]:
        state: dict[str, tuple] = {}
        for dirpath, dirnames, filenames in os.walk(folder):
            if skip is not None and Path(dirpath) == skip.parent:
                dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
            for name in dirnames + filenames:
                path = Path(dirpath, name)
                if skip is not None and path == skip:
                    continue
                if path.is_symlink():
                    state[str(path)] = ("link", os.readlink(path))
                elif path.is_file():
                    state[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
                else:
                    state[str(path)] = ("dir", path.stat().st_mode)
        return state

    def snapshot_outside(self) -> dict[str, tuple]:
        return self.snapshot(self.root, skip=self.workspace)

    def check_nothing_escaped(self, result: ToolResult, reads: bool) -> None:
        now = self.snapshot_outside()
        changed = sorted(set(now.items()) ^ set(self.before.items()))
        assert not changed, f"something outside the workspace changed: {changed[:5]}"
        git_now = self.snapshot(self.workspace / ".git"), self.snapshot(self.workspace / "sub" / ".git")
        assert git_now == self.git_before, ".git (or the nested sub/.git) changed"
        for target in self.escape_targets:
            assert not os.path.lexists(target), f"{target} was created"
        if reads:
            assert SECRET not in result.output, "the secret from outside the workspace was shown"


@pytest.fixture(scope="module")
def arena():
    """Its own temporary folder: pytest prunes old basetemp folders, and a concurrent pytest session's
    pruning must not look like an escape."""
    root = Path(tempfile.mkdtemp(prefix="dflash-fuzz-")).resolve()
    yield Arena(root)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def tools(arena) -> dict[str, Tool]:
    catalog = discover_skills(arena.workspace, user_dirs=[])
    assert "demo" in catalog.names()
    return {t.name: t for t in [BashTool(), *file_tools(), FinishTool(), ActivateSkillTool(catalog)]}


@contextmanager
def case(kind: str):
    CASES[kind] += 1
    try:
        yield
    except BaseException:  # an exception out of a tool, or a failed check that something escaped
        ESCAPES[kind] += 1
        raise


def run_case(arena: Arena, tools: dict[str, Tool], name: str, arguments, gated: bool, reads: bool) -> None:
    with case(name):
        ctx = ToolContext(arena.workspace, ToolPolicy(command_timeout=3, max_output_chars=4000))
        if gated:
            ctx.approver = Approver(ApprovalPolicy(mode="auto"))
            result = Toolbox(list(tools.values())).run(name, arguments, ctx)
        else:
            result = tools[name].invoke(arguments, ctx)
        assert isinstance(result, ToolResult) and isinstance(result.output, str)
        if result.is_error:
            assert result.output.strip(), "an error without a message"
        arena.check_nothing_escaped(result, reads)


# ---------------------------------------------------------------- strategies

SURROGATES = st.sampled_from(["\ud800", "\udfff", "\udc80"])
ANY_CHAR = st.characters(codec=None) | SURROGATES | st.sampled_from(["\x00", "\n", "/", ".", "~"])
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(ANY_CHAR, max_size=20)
    | st.sampled_from([10**30, -(10**30), float("nan"), float("inf"), b"bytes", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
SPECIAL = st.sampled_from(
    [
        "..",
        ".",
        "",
        "a.txt",
        "src",
        "m.py",
        "new.txt",
        "newdir",
        ".git",
        "config",
        "HEAD",
        "hooks",
        "link_out",
        "link_sentinel",
        "link_root",
        "link_loop",
        "link_dangling",
        "link_up",
        "sentinel.txt",
        "outside",
        "dir",
        "inner.txt",
        "etc",
        "tmp",
        "~",
        ESCAPE_NAME,
        ".agents",
        "skills",
        "demo",
        "SKILL.md",
        "ref.md",
        ".a.txt.dflash-tmp",
        "link_git",
        "sub",
        "fifo",
        "post-commit",
    ]
)
SEGMENTS = st.one_of(SPECIAL, SPECIAL, SPECIAL, SPECIAL, st.text(ANY_CHAR, max_size=6), st.just("n" * 300))


@st.composite
def paths(draw, arena: Arena) -> str:
    prefix = draw(
        st.sampled_from(
            ["", "", "/", "~/", "./", "../", f"{arena.root}/", f"{arena.workspace}/", f"{arena.outside}/", "/tmp/"]
        )
    )
    return prefix + "/".join(draw(st.lists(SEGMENTS, min_size=1, max_size=5)))


HUGE = st.builds(
    lambda piece, n: piece * n, st.sampled_from(["x", "é", "\n", "\x00", "<content>"]), st.integers(1_000, 100_000)
)
TEXT = st.text(ANY_CHAR, max_size=80) | HUGE
NUMBER = (
    st.integers(-5, 50)
    | st.sampled_from([0, 10**30, -(10**30), 2**63])
    | st.floats()
    | st.text("0123456789.-e", max_size=4)
)
# No unbounded quantifiers: Python's `re` has no time limit, and `.*.*x` on the 100 000-character lines the
# write_file cases leave behind backtracks for minutes (a known limitation of the search tool, not a crash).
REGEX_PIECE = st.sampled_from(
    ["a", "x", "def", "alpha", ".", r"\d", r"\w", "[a-z]", "^", "$", " ", "é", r"\(", "|", "(", ")"]
)
REGEX = st.one_of(
    st.lists(st.tuples(REGEX_PIECE, st.sampled_from(["", "", "?", "{2}"])), max_size=6).map(
        lambda ps: "".join(a + b for a, b in ps)
    ),
    st.sampled_from(
        [
            "(",
            "[",
            ")",
            "*",
            "a{99999999999}",
            "(" * 300 + ")" * 300,
            "(" * 5000 + ")" * 5000,
            "(?P<",
            "\\",
            "",
            "\x00",
            "[z-a]",
            "\ud800",
        ]
    ),
)


def arguments_for(arena: Arena, fields: dict) -> st.SearchStrategy[dict]:
    """Mostly the right keys with plausible values, sometimes junk, extra keys or a non-dict."""
    value = {name: st.one_of(strategy, strategy, strategy, JUNK) for name, strategy in fields.items()}
    good = st.fixed_dictionaries(value) | st.fixed_dictionaries({}, optional=value)
    return st.one_of(
        good,
        st.tuples(good, st.dictionaries(st.text(max_size=6), JUNK, max_size=2)).map(lambda t: {**t[1], **t[0]}),
        JUNK,
    )


def file_arguments(arena: Arena) -> dict[str, st.SearchStrategy]:
    path = paths(arena)
    return {
        "read_file": {"path": path, "start_line": NUMBER, "end_line": NUMBER},
        "write_file": {"path": path, "content": TEXT},
        "edit_file": {"path": path, "old": st.sampled_from(["alpha", "return 1", "x", ""]) | TEXT, "new": TEXT},
        "list_files": {"path": path},
        "search": {"pattern": REGEX, "path": path},
        "finish": {"summary": TEXT},
        "activate_skill": {
            "name": st.sampled_from(["demo", "python-pytest-project", " demo ", "../demo"]) | TEXT,
            "file": st.sampled_from(["ref.md", "./ref.md", "SKILL.md"]) | path,
        },
    }


READS = {"read_file", "list_files", "search", "activate_skill", "finish"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "tool", ["read_file", "write_file", "edit_file", "list_files", "search", "finish", "activate_skill"]
)
def test_file_and_builtin_tools_never_raise_or_escape(tool, arena, tools):
    fields = file_arguments(arena)[tool]
    examples = {"write_file": 600, "edit_file": 500, "read_file": 500, "search": 300}.get(tool, 250)

    @settings(max_examples=examples, **SETTINGS)
    @given(arguments=arguments_for(arena, fields), gated=st.booleans())
    def fuzz(arguments, gated):
        run_case(arena, tools, tool, arguments, gated, reads=tool in READS and tool != "finish")

    fuzz()


def test_paths_through_symlinks_and_dots_are_refused(arena, tools):
    """The cases the random search must include, checked directly."""
    for path in [
        "../outside/sentinel.txt",
        "link_sentinel",
        "link_out/sentinel.txt",
        "link_root/etc/passwd",
        "src/link_up/outside/sentinel.txt",
        f"{arena.outside}/sentinel.txt",
        "link_loop",
        "link_loop/x",
        "a.txt/../../outside/sentinel.txt",
        "~/" + ESCAPE_NAME,
    ]:
        for name, arguments in [
            ("read_file", {"path": path}),
            ("write_file", {"path": path, "content": "x"}),
            ("edit_file", {"path": path, "old": "a", "new": "b"}),
            ("list_files", {"path": path}),
            ("search", {"pattern": "SENTINEL", "path": path}),
        ]:
            with case(name):
                result = tools[name].invoke(arguments, ToolContext(arena.workspace))
                assert result.is_error and result.output.strip(), (name, path, result.output)
                arena.check_nothing_escaped(result, reads=True)


def test_writes_into_any_git_folder_through_any_route_are_refused(arena, tools):
    """Nested repositories and links to .git count like the top .git; a FIFO is an error, never a hang."""
    for path in [
        ".git/config",
        "link_git/config",
        "link_git/hooks/post-commit",
        "sub/.git/config",
        "sub/.git/hooks/post-commit",
        "src/link_up/workspace/.git/config",
        "sub/../.git/HEAD",
    ]:
        for name, arguments in [
            ("write_file", {"path": path, "content": "[core]\n\tfsmonitor = x\n"}),
            ("edit_file", {"path": path, "old": "[core]", "new": "[core]\n\tfsmonitor = x"}),
        ]:
            with case(name):
                result = tools[name].invoke(arguments, ToolContext(arena.workspace))
                assert result.is_error and result.output.strip(), (name, path, result.output)
                arena.check_nothing_escaped(result, reads=False)
    fifo = arena.workspace / "fresh_fifo"  # its own: the fuzzing above may have written a file over "fifo"
    os.mkfifo(fifo)
    for name, arguments in [
        ("read_file", {"path": fifo.name}),
        ("edit_file", {"path": fifo.name, "old": "a", "new": "b"}),
    ]:
        with case(name):
            result = tools[name].invoke(arguments, ToolContext(arena.workspace))
            assert result.is_error and "not a regular file" in result.output, result.output


SAFE_WORDS = st.sampled_from(["echo", "printf", "true", "false", "pwd", "ls", "cat", "wc", "exit", "test", ":"])
SAFE_ARGS = st.lists(
    st.sampled_from(
        list("abc012 ._-/é\"'\\;|()#*?~")
        + ["\x00", "\ud800", "\n", "-n", "-la", "src", "a.txt", "..", "link_out", "link_loop"]
    ),
    max_size=8,
).map("".join)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(
    command=st.lists(st.tuples(SAFE_WORDS, SAFE_ARGS), min_size=1, max_size=3).map(
        lambda parts: " ; ".join(f"{w} {a}" for w, a in parts)
    ),
    timeout=st.none() | st.sampled_from([0, -1, 0.5, 2, 10**9, float("nan"), float("inf"), "2", "x", [1]]),
    gated=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["cwd", "env", "shell"]), JUNK, max_size=1),
)
def test_bash_never_raises_with_harmless_commands(arena, tools, command, timeout, gated, extra):
    arguments = {"command": command, **extra} if timeout is None else {"command": command, "timeout": timeout, **extra}
    run_case(arena, tools, "bash", arguments, gated, reads=False)


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(
    command=st.lists(
        ANY_CHAR
        | st.sampled_from(
            [
                "rm -rf ",
                "$(",
                "`",
                "<<EOF\n",
                "\nEOF\n",
                " | ",
                " && ",
                "'",
                '"',
                "(",
                ")",
                "cd ",
                "git push -f",
                "find / -delete",
                "bash -c ",
                "../",
                "~",
                "*",
                " > .git/x",
                "sudo ",
                "xargs ",
                "{}",
                "\\",
            ]
        ),
        max_size=40,
    ).map("".join)
    | HUGE.map(lambda text: text[:10_000]),
    mode=st.sampled_from(["auto", "ask", "never-ask"]),
    rules=st.lists(
        st.sampled_from(["git", "rm", "cmd:python -m pytest", "tool:bash", "mcp:x", "", "cmd:", "*"])
        | st.text(max_size=8),
        max_size=3,
    ),
)
def test_approval_policy_never_raises_on_any_command(arena, command, mode, rules):
    """The policy parses what the model wrote; nothing it writes may crash the check (nothing runs here)."""
    with case("approval policy"):
        analysis = analyse_command(command, arena.workspace)
        assert all(d.reason and isinstance(d.command, str) for d in analysis.dangers)
        policy = ApprovalPolicy(mode=mode, allow=rules, deny=rules[:1])
        verdict = policy.evaluate(tools_bash_stub, {"command": command}, arena.workspace)
        assert verdict.action in ("allow", "ask", "refuse") and verdict.reason
        decision = Approver(policy, ask=lambda request: False).review(
            tools_bash_stub, {"command": command}, arena.workspace
        )
        assert decision.reason and (decision.allowed or decision.reason.startswith(("refused", "refused:")))


class _BashStub(BashTool):
    """Bash as the policy sees it (its command is analysed), never run."""

    def run(self, params, ctx):  # pragma: no cover - the policy test never runs tools
        raise AssertionError("must not run")


tools_bash_stub = _BashStub()


@pytest.mark.slow  # counts what the (slow) fuzz tests above ran
def test_fuzzing_ran_and_nothing_escaped():
    assert sum(ESCAPES.values()) == 0
    expected = {
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "search",
        "finish",
        "activate_skill",
        "bash",
        "approval policy",
    }
    assert expected <= set(CASES) and all(CASES[k] > 0 for k in expected)
