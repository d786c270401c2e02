"""`agent`: the command line. Every command lives in agent/commands/, in the module named after it, and is
listed once below (no registration by import side effect).

Command modules import only typer at the top, so `agent --help`, `--version` and shell completion stay fast.
Errors raised on purpose (every one derives from inference/errors.py `DflashError`) are raised wherever they are
found; `Commands.invoke` is the one place that turns any of them into `error: ...` and an exit code."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from agent.commands import (
    bench,
    chat,
    doctor,
    engine,
    eval,
    init,
    mcp,
    models,
    new_project,
    refactor,
    run,
    serve,
    sessions,
    skills,
    trust,
    undo,
)
from agent.commands.common import fail


class Commands(TyperGroup):
    """The command group: an error raised on purpose (`DflashError`) anywhere below a command ends as one `error:`
    line; anything else is a bug and keeps its traceback."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]  # typer widens click's Context
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # --help and usage errors: typer's own
            raise
        except Exception as exc:
            from agent.core.errors import git_unusable
            from inference.errors import DflashError  # only now: `inference` loads its backends on import

            if (reason := git_unusable(exc)) is not None:
                fail(reason)
            if not isinstance(exc, DflashError):
                raise
            fail(str(exc), getattr(exc, "exit_code", 1))


app = typer.Typer(
    help="dflash-agent: a local coding agent on your own machine. Alone on a terminal, `agent` "
    "opens a chat in the current repository.",
    pretty_exceptions_enable=False,
    cls=Commands,
)

app.command("chat")(chat.chat)
app.command("run")(run.run)
app.command("new-project")(new_project.new_project)
app.add_typer(sessions.app, name="sessions")
app.command("undo")(undo.undo)
app.command("refactor")(refactor.refactor)
app.command("init")(init.init)
app.command("trust")(trust.trust)
app.add_typer(skills.app, name="skills")
app.add_typer(mcp.app, name="mcp")
app.add_typer(models.app, name="models")
app.add_typer(engine.app, name="engine")
app.command("serve")(serve.serve)
app.command("bench")(bench.bench)
app.command("doctor")(doctor.doctor)
app.add_typer(eval.app, name="eval")


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import version

        typer.echo(f"dflash-agent {version('dflash-agent')}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _main(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print the version and exit."
    ),
) -> None:
    """dflash-agent: a local coding agent on your own machine."""
    import signal
    import sys

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            typer.echo(ctx.get_help())
            raise typer.Exit(2)
        chat.chat()


def _exit_on_sigterm(signum: int, _frame) -> None:
    """`kill` unwinds like an exception, so the servers a command started are stopped, not orphaned."""
    raise SystemExit(128 + signum)


if __name__ == "__main__":  # pragma: no cover
    app()
