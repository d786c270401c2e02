"""`agent chat` (and `agent` alone on a terminal): an interactive session in a repository."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent.commands.common import (
    Approval,
    CacheType,
    CtxSize,
    Endpoint,
    MaxSteps,
    Model,
    Preset,
    Profile,
    Sandbox,
    err,
    fail,
)


def chat(
    repo: Annotated[Path, typer.Option("--repo", "-r", help="The git repository to work in.")] = Path("."),
    cont: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the latest chat in this repository.")
    ] = False,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue the session with this id (`agent sessions list`).")
    ] = None,
    model: Model = None,
    endpoint: Endpoint = None,
    profile: Profile = None,
    ctx_size: CtxSize = None,
    cache_type: CacheType = None,
    max_steps: MaxSteps = None,
    approval: Approval = None,
    sandbox: Sandbox = None,
    preset: Preset = None,
) -> None:
    """Talk with the agent in a repository: replies stream, changes are committed on the session's branch
    (/undo takes one back), follow-ups continue the conversation. /help lists the slash commands."""
    import signal
    import sys

    from rich.console import Console

    from agent.core.session import find_session, list_sessions
    from agent.settings.config import load_config
    from agent.ui.chat import open_chat
    from agent.ui.chat_display import ChatDisplay
    from agent.ui.chat_repl import repl
    from agent.ui.display import print_git
    from agent.ui.trust_prompt import ask_trust_on_terminal

    if cont and resume:
        fail("--continue and --resume both choose a session; give one of them")
    path = find_session(resume) if resume else _latest_chat(repo, list_sessions) if cont else None
    config = load_config(
        repo if repo.is_dir() else None,
        dict(
            model=model,
            endpoint=endpoint,
            profile=profile,
            ctx_size=ctx_size,
            cache_type=cache_type,
            max_steps=max_steps,
            approval=approval,
            sandbox=sandbox,
            preset=preset,
        ),
        ask=ask_trust_on_terminal,
        warn=lambda line: err.print(line, highlight=False, markup=False, soft_wrap=True),
    )
    console = Console(highlight=False)
    if sys.stdin.isatty():  # Ctrl-C stops a reply: also when started by a parent that ignores it (nohup, `cmd &`)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    with open_chat(repo, config, ChatDisplay(console, repo.expanduser().resolve()), path) as session:
        repl(session, _terminal_reader() if sys.stdin.isatty() else _line_reader(), console)
    if session.git:
        print_git(console, session.git)
    console.print(f"continue with: agent chat --resume {session.id}", markup=False)


def _latest_chat(repo: Path, list_sessions) -> Path:
    chats = [s for s in list_sessions(repo.expanduser()) if s.kind == "chat"]
    if not chats:
        fail(f"no chat session in {repo.expanduser().resolve()} yet; start one with `agent chat`")
    return chats[0].path


def _terminal_reader():
    """Lines from prompt_toolkit: history across sessions, Alt-Enter (or Esc Enter) for a new line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    from agent.core.session import runs_dir

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    runs_dir().mkdir(parents=True, exist_ok=True)
    prompt = PromptSession(history=FileHistory(str(runs_dir().parent / "chat-history")), key_bindings=keys)

    def read() -> str | None:
        try:
            return prompt.prompt("\u203a ")  # a right-pointing angle quote
        except EOFError:
            return None

    return read


def _line_reader():
    """One message per line from a pipe."""
    import sys

    def read() -> str | None:
        line = sys.stdin.readline()
        return line if line else None

    return read
