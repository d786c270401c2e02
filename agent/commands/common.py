"""What several commands share: the error line, the stderr console, and the run options (defined once)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import typer
from rich.console import Console

err = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print `error: message` (model and repository text shown as it is, never as markup) and exit."""
    from rich.text import Text

    from agent.ui.plain import visible

    err.print(Text.assemble(("error:", "red"), " ", visible(message)), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


Model = Annotated[
    str | None,
    typer.Option("--model", "-m", help="Catalog model for the embedded backend (see `agent models list`)."),
]
Endpoint = Annotated[
    str | None, typer.Option("--endpoint", help="Use a running OpenAI-compatible server at this base URL instead.")
]
Profile = Annotated[
    str | None,
    typer.Option("--profile", help="Start llama-server with this profile for the run (see `agent serve --list`)."),
]
CtxSize = Annotated[
    int | None,
    typer.Option("--ctx-size", help="With --profile: the server's context in tokens, instead of the profile's."),
]
CacheType = Annotated[
    str | None,
    typer.Option(
        "--cache-type",
        help="With --profile: the server's KV cache type for K and V (e.g. q8_0, q4_0; vLLM/SGLang: fp8), "
        "instead of the profile's.",
    ),
]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", help="Stop after this many model turns.")]
Approval = Annotated[
    str | None,
    typer.Option(
        "--approval",
        help="Tool-call approval: auto (default), ask (prompt on the terminal) or never-ask (allow rules only).",
    ),
]
# The modes of Config.sandbox (tests/agent/test_cli_start.py checks they are the same): a Literal here, so that
# the CLI lists and checks them without importing the config and pydantic.
SandboxMode = Literal["read-only", "workspace-write", "full-access"]
Sandbox = Annotated[
    SandboxMode | None,
    typer.Option(
        "--sandbox",
        help=(
            "Where commands may write: read-only, workspace-write (the default: the workspace only) or full-access (no "
            "sandbox). Overrides DFLASH_AGENT_SANDBOX and `sandbox` in config.toml."
        ),
    ),
]
# The names of agent/settings/config.py's PRESETS (tests/agent/settings/test_config.py checks they are the same), as a Literal for
# the same reason as SandboxMode.
PresetName = Literal["humaneval"]
Preset = Annotated[
    PresetName | None,
    typer.Option(
        "--preset",
        help="A benchmark's settings beneath yours (humaneval: up to 12 whole-file answers for a named stub, prose "
        "docstring examples checked). The defaults serve any task.",
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (progress stays on stderr).")]
OutputFormat = Annotated[
    Literal["text", "json", "stream-json"] | None,
    typer.Option(
        "--output-format",
        show_default=False,
        help="text (default: progress and summary on stderr), json (the result object on stdout, also on failure; "
        "same as --json) or stream-json (one JSON event per line on stdout: start, text, tool_call, "
        "tool_result, step, note, end or error).",
    ),
]


def run_workflow(fn: Callable[..., Any], target: Path, text: str, flags: dict[str, Any], output: str) -> None:
    """Run `fn(target, text, config, events)` (a workflow of agent/workflows/runs.py) and report it on the chosen
    output: a summary on stderr (text), the result object on stdout (json), or events as they happen
    (stream-json). On json outputs a failure also ends with an object on stdout (see `final_on_failure`)."""
    import json
    import sys

    from agent.settings.config import load_config
    from agent.ui.headless import StreamEvents, emit, session_of
    from agent.ui.trust_prompt import ask_trust_on_terminal

    if output == "stream-json":
        emit(sys.stdout, "start", workspace=str(target), task=text)
    with final_on_failure(output):
        config = load_config(
            target if target.is_dir() else None,
            flags,
            ask=ask_trust_on_terminal,
            warn=lambda line: err.print(line, highlight=False, markup=False, soft_wrap=True),
        )
        if output == "stream-json":
            result = fn(target, text, config, StreamEvents(sys.stdout))
        else:
            from agent.ui.display import TerminalEvents

            terminal = TerminalEvents(err)
            terminal.waiting(_first_wait(config))  # a status line, not a blank screen, until the first token
            try:
                result = fn(target, text, config, terminal)
            finally:
                terminal.quiet()
    dump = {**result.model_dump(), "session": session_of(result.transcript)}
    if output == "json":
        typer.echo(json.dumps(dump, indent=2))
    elif output == "stream-json":
        emit(sys.stdout, "end", result=dump)
    else:
        from agent.ui.display import print_summary

        print_summary(err, result)
    if result.run.status == "error":
        err.print(
            f"Fix the cause above, then resume with: agent run --resume {result.transcript}",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(2)


@contextmanager
def final_on_failure(output: str) -> Iterator[None]:
    """Every failure in the block ends with the final object on json outputs: a user error and Ctrl-C as
    `error: ...` (`failed`); anything else (a bug) as an `internal error` object, then raised on, so that its
    traceback goes to stderr and the exit status is non-zero as for any other command."""
    from click.exceptions import Abort, ClickException, Exit

    from agent.ui.headless import session_of
    from agent.workflows.runs import RunInterrupted
    from inference.errors import DflashError

    try:
        yield
    except RunInterrupted as stop:
        where = f"the work so far is committed on branch {stop.branch}; " if stop.branch else ""
        failed(
            output,
            f"interrupted (Ctrl-C): {where}the conversation is saved.\n"
            f"Resume with: agent run --resume {stop.transcript}",
            130,
            session=session_of(stop.transcript),
        )
    except DflashError as exc:
        failed(output, str(exc), getattr(exc, "exit_code", 1))
    except Exit:  # `failed` above, or a command's own exit: already said
        raise
    except KeyboardInterrupt:  # before the run had a transcript (the model loading, say)
        failed(output, "interrupted (Ctrl-C) before the run started", 130)
    except (Abort, ClickException) as exc:
        final_object(output, str(exc) or type(exc).__name__.lower(), getattr(exc, "exit_code", 1))
        raise
    except SystemExit as exc:  # `kill` (see agent/cli.py)
        code = exc.code if isinstance(exc.code, int) else 1
        if code:
            final_object(output, f"stopped (exit status {code})", code)
        raise
    except Exception as exc:
        final_object(output, f"internal error: {type(exc).__name__}: {exc} (a bug: the traceback is on stderr)", 1)
        raise


def _first_wait(config: Any) -> str:
    """What the status line says until the first token: the blank part of a run (the model loading, the
    prompt being read)."""
    if config.endpoint:
        return f"the model at {config.endpoint} is reading the prompt ..."
    if config.profile:
        return f"starting the {config.profile} server, then reading the prompt ..."
    return f"loading {config.model}, then reading the prompt ..."


def failed(output: str, message: str, code: int, **data: Any) -> NoReturn:
    """`fail`, after the final object that json and stream-json outputs promise on failure too."""
    final_object(output, message, code, **data)
    fail(message, code)


def final_object(output: str, message: str, code: int, **data: Any) -> None:
    """On json outputs, the object a failed run ends with: json's `{"status": "error", ...}` or stream-json's
    `error` event (text output: nothing)."""
    import json
    import sys

    from agent.ui.headless import emit

    if output == "json":
        typer.echo(json.dumps({"status": "error", "error": message, "exit_code": code, **data}, indent=2))
    elif output == "stream-json":
        emit(sys.stdout, "error", message=message, exit_code=code, **data)


def output_format(output: str | None, as_json: bool) -> str:
    """`--json` is `--output-format json`; giving both with different values is a mistake."""
    if as_json and output not in (None, "json"):
        fail(f"--json and --output-format {output} disagree; give one of them")
    return "json" if as_json else output or "text"
