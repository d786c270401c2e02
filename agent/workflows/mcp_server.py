"""The agent itself as an MCP server, for IDEs and desktop apps: run a task in a directory, create a new
project, list skills. Served over stdio (what clients launch) or streamable HTTP on 127.0.0.1 with a bearer
token. Everything human-readable goes to stderr: stdout is the protocol channel."""

from __future__ import annotations

import hmac
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import git
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from agent.core.toolcalls import ParsedCall
from agent.git import repo as gitrepo
from agent.settings.config import ConfigError, load_config
from inference.backends.backend import BackendError, Completion
from inference.paths import APP, app_version
from tools.base import ToolResult

log = logging.getLogger("dflash-agent.mcp")
MAX_DIFF_CHARS = 20_000


class TestsReport(BaseModel):
    command: str
    passed: bool  # exited 0 and ran tests
    output_tail: str
    summary: str = ""  # what ran: "12 tests passed", "3 passed, 1 failed", "no tests ran (...)"


class TaskReport(BaseModel):
    """What an IDE shows after a run: the outcome, what changed, and whether the tests pass."""

    status: str
    summary: str
    directory: str
    changed_files: list[str]
    diff_stat: str
    diff: str
    tests: TestsReport | None
    steps: int
    transcript: str
    missing: list[str] = []  # files and names the task asked for that are not there (agent/checks/named.py)


class SkillInfo(BaseModel):
    name: str
    description: str
    source: str


class _ProgressEvents:
    """Agent events from the worker thread, forwarded as MCP progress notifications."""

    def __init__(self, report: Callable[[int, str], None]):
        self.report = report

    def on_text(self, text: str) -> None:
        pass

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        calls = ", ".join(c.name for c, _ in results) or "no tool call"
        self.report(step, f"step {step}: {calls} ({completion.timings.completion_tokens} tokens)")

    def on_note(self, text: str) -> None:
        log.info(text)


@contextmanager
def shared_backend(overrides: dict[str, Any], parallel: int) -> Iterator[tuple[dict[str, Any], int]]:
    """(overrides, runs at once) for every run of one `agent mcp serve`, on the backend the runtime chooses
    (`agent.workflows.runtime.served`): with a profile, one llama-server with `parallel` slots started here for all runs
    (its cache stays warm between them) and reached as an endpoint; with an endpoint, `parallel` runs share it;
    the embedded model is one in-process model, so one run at a time."""
    from agent.workflows.runtime import served

    config = load_config(None, overrides)
    with served(config, parallel, lambda text: log.info("%s for every run", text)) as (chosen, runs, _):
        if runs < parallel:
            log.info("the embedded model runs one task at a time; --parallel needs --profile or --endpoint")
        if chosen.endpoint != config.endpoint:  # a server started here for every run
            overrides = {**overrides, "endpoint": chosen.endpoint}
        yield overrides, runs


def build_server(
    overrides: dict[str, Any] | None = None, roots: list[Path] | None = None, runs_at_once: int = 1
) -> MCPServer:
    """`overrides` are config values for every run (model, endpoint, profile...); `roots` are the folders
    clients may ask the agent to work in (default: the current directory); `runs_at_once` runs may overlap
    (a server with that many slots behind them), never two in one directory."""
    allowed = [r.expanduser().resolve() for r in (roots or [Path.cwd()])]
    server = MCPServer(
        APP,
        version=app_version(),
        instructions="A local coding agent. run_task changes code in a git repository; "
        "new_project builds a project in a new folder.",
    )
    slots = anyio.Semaphore(runs_at_once)
    directory_locks: dict[Path, anyio.Lock] = {}

    def inside_roots(directory: str) -> Path:
        if "\0" in directory:
            raise ToolError(f"{directory!r} holds a NUL byte, which no path can; give a path inside {allowed[0]}")
        try:
            path = Path(directory).expanduser().resolve()
        except (RuntimeError, OSError, ValueError):  # `~name` of no user here, a symlink loop, a name too long
            raise ToolError(f"{directory!r} is no folder on this machine; give a path inside {allowed[0]}") from None
        if not any(path == r or path.is_relative_to(r) for r in allowed):
            raise ToolError(
                f"{path} is outside the folders this server may work in "
                f"({', '.join(map(str, allowed))}); start it with --root {path.parent}"
            )
        return path

    async def run_workflow(workflow, target: Path, text: str, max_steps: int | None, ctx: Context) -> TaskReport:
        config_overrides = {**(overrides or {}), "max_steps": max_steps}
        try:
            config = load_config(target if target.exists() else None, config_overrides)
        except ConfigError as exc:
            raise ToolError(str(exc)) from exc
        total = config.max_steps

        def report(step: int, message: str) -> None:
            anyio.from_thread.run(ctx.report_progress, step, total, message)

        def work():
            start = _head_commit(target)
            result = workflow(target, text, config, _ProgressEvents(report))
            return result, start

        async with directory_locks.setdefault(target, anyio.Lock()), slots:
            try:
                result, start = await anyio.to_thread.run_sync(work)
            except (BackendError, ValueError, OSError) as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        return _report(result, start)

    @server.tool()
    async def run_task(task: str, directory: str, ctx: Context, max_steps: int | None = None) -> TaskReport:
        """Run a coding task in an existing git repository (absolute path). Returns the outcome, changed
        files, the diff and the test result. Progress is reported after each agent step."""
        from agent.workflows.runs import run_task as workflow

        return await run_workflow(workflow, inside_roots(directory), task, max_steps, ctx)

    @server.tool()
    async def new_project(prompt: str, directory: str, ctx: Context, max_steps: int | None = None) -> TaskReport:
        """Create a new project in a new or empty folder (absolute path) from a description; the agent writes
        code and tests, runs them and commits."""
        from agent.workflows.runs import new_project as workflow

        return await run_workflow(workflow, inside_roots(directory), prompt, max_steps, ctx)

    @server.tool()
    def list_skills(directory: str | None = None) -> list[SkillInfo]:
        """The skills the agent can use: bundled, the user's, and the project's when `directory` is given."""
        from skills.loader import discover_skills

        catalog = discover_skills(inside_roots(directory) if directory else None)
        return [SkillInfo(name=s.name, description=s.description, source=s.source) for s in catalog.skills]

    return server


def _report(result, start: str | None) -> TaskReport:
    directory = Path(result.directory)
    diff, changed = _changes_since(directory, start)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n... [{len(diff) - MAX_DIFF_CHARS} more characters cut]"
    tests = result.tests
    return TaskReport(
        status=result.run.status,
        summary=result.run.summary,
        directory=str(directory),
        changed_files=result.files if start is None else changed,
        diff_stat=result.diff_stat,
        diff=diff,
        tests=TestsReport(
            command=tests.command, passed=tests.passed, output_tail=tests.output_tail, summary=tests.summary
        )
        if tests
        else None,
        steps=result.run.stats.steps,
        transcript=result.transcript,
        missing=result.missing,
    )


def _head_commit(directory: Path) -> str | None:
    try:
        return git.Repo(directory).head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return None


def _changes_since(directory: Path, start: str | None) -> tuple[str, list[str]]:
    """The diff from `start` (or of the whole last commit, for a new project) to the working tree, and
    the changed paths including new untracked files."""
    repo = gitrepo.open_repo(directory)  # git locked down: it runs nothing the repository configured
    if start is None:
        return (repo.git.show(*gitrepo.DIFF_FLAGS, "--format=", "HEAD") if repo.head.is_valid() else ""), []
    names = gitrepo.diff(repo, "--name-only", start).splitlines() + repo.untracked_files
    return gitrepo.diff(repo, start), sorted(set(names))


class BearerTokenGuard:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <token>` (constant-time compare)."""

    def __init__(self, app, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", [])).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                from starlette.responses import JSONResponse

                response = JSONResponse(
                    {"error": "missing or wrong bearer token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def serve_stdio(server: MCPServer) -> None:
    _log_to_stderr()
    server.run()


def serve_http(server: MCPServer, port: int, token: str) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp; loopback only, token required."""
    import uvicorn

    _log_to_stderr()
    app = BearerTokenGuard(server.streamable_http_app(host="127.0.0.1"), token)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _log_to_stderr() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s: %(message)s")
