"""The chat's read-reply loop and its slash commands, on a console; where lines come from (prompt_toolkit on a
terminal, plain lines from a pipe) is the caller's choice (agent/commands/chat.py)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from agent.ui.chat import ChatSession
from agent.ui.plain import plain, visible
from inference.errors import DflashError

Read = Callable[[], "str | None"]  # the next input (None: end of input); KeyboardInterrupt: Ctrl-C at the prompt
STOP = object()


def repl(session: ChatSession, read: Read, console: Console) -> None:
    """Read a message, reply, until /exit or end of input. Ctrl-C while the agent works stops that reply only."""
    console.print(
        Text.assemble(
            ("dflash-agent", "bold"),
            plain(f" · {session.repo} · branch {session.git_run.branch} · session id {session.id}"),
            ("\n/help for commands, Alt-Enter for a new line, Ctrl-C stops a reply, /exit or Ctrl-D to end.", "dim"),
        ),
        highlight=False,
    )
    while True:
        try:
            line = read()
        except KeyboardInterrupt:
            continue
        if line is None:
            return
        text = line.strip()
        if not text:
            continue
        try:
            if text.startswith("/"):
                if slash(session, text, console) is STOP:
                    return
            else:
                reply(session, text, console)
        except KeyboardInterrupt:
            console.print(
                plain("\nstopped (Ctrl-C): what it changed so far is committed; go on, or /undo", "yellow"),
                highlight=False,
            )
        except DflashError as exc:
            console.print(Text.assemble(("error:", "red"), " ", visible(str(exc))), highlight=False, soft_wrap=True)


def reply(session: ChatSession, text: str, console: Console) -> None:
    result = session.send(text)
    if result.status != "finished":
        console.print(plain(f"{result.status}: {result.summary.strip()[:500]}", "yellow"), highlight=False)
    s, last = result.stats, session.last
    read = f" · last prompt {last.prompt_tokens} tok ({last.cached_prompt_tokens} from cache)" if last else ""
    console.print(
        plain(
            f"{s.steps} turn{'s' * (s.steps != 1)} · {s.completion_tokens} tok at {s.tokens_per_second:.1f} tok/s{read} · "
            f"{result.wall_seconds:.0f}s",
            "dim",
        ),
        highlight=False,
    )


def slash(session: ChatSession, text: str, console: Console) -> object:
    name, _, arg = text[1:].partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None:
        console.print(plain(f"unknown command /{name}; /help lists them", "yellow"), highlight=False)
        return None
    return command[0](session, arg.strip(), console)


def _help(session: ChatSession, arg: str, console: Console) -> None:
    for name, (_, about) in COMMANDS.items():
        console.print(Text.assemble((f"/{name:8}", "bold"), f" {about}"), highlight=False)


def _undo(session: ChatSession, arg: str, console: Console) -> None:
    done = session.undo()
    console.print(
        plain(
            f"undid {done.undone[:10]} {done.undone_subject}; files back as before: {', '.join(done.files) or '(none)'}"
        ),
        highlight=False,
    )


def _diff(session: ChatSession, arg: str, console: Console) -> None:
    text = session.diff()
    console.print(Syntax(visible(text), "diff", background_color="default") if text else "no changes in this session")


def _clear(session: ChatSession, arg: str, console: Console) -> None:
    session.clear()
    console.print("new conversation (the session's branch and commits stay)")


def _compact(session: ChatSession, arg: str, console: Console) -> None:
    t = session.compact()
    console.print(
        plain(
            f"compacted: the {t.prompt_tokens}-token conversation is now a {t.completion_tokens}-token "
            f"summary after the system prompt (reading it: {t.prompt_ms / 1000:.1f}s, "
            f"{t.cached_prompt_tokens} tokens from the KV cache; writing the summary: "
            f"{t.predicted_ms / 1000:.1f}s)"
        ),
        highlight=False,
    )


def _model(session: ChatSession, arg: str, console: Console) -> None:
    c = session.config
    serving = f"endpoint {c.endpoint}" if c.endpoint else f"profile {c.profile}" if c.profile else f"embedded {c.model}"
    console.print(
        plain(
            f"{serving} · context {c.n_ctx} tokens · temperature {c.temperature}; to change it, /exit and "
            f"`agent chat --continue --model ID` (or --endpoint / --profile)"
        ),
        highlight=False,
    )


def _skills(session: ChatSession, arg: str, console: Console) -> None:
    from skills.loader import discover_skills

    catalog = discover_skills(session.repo)
    for skill in catalog.skills:
        console.print(
            Text.assemble(plain(skill.name, "bold"), plain(f" ({skill.source}) {skill.description}")), highlight=False
        )
    if not catalog.skills:
        console.print("no skills found")


def _mcp(session: ChatSession, arg: str, console: Console) -> None:
    names = [tool.name for tool in session.mcp_tools]
    console.print(
        plain("MCP tools: " + ", ".join(names) if names else "no MCP tools in this session (`agent mcp list`)"),
        highlight=False,
    )


def _cost(session: ChatSession, arg: str, console: Console) -> None:
    console.print(plain(session.cost()), highlight=False)


def _resume(session: ChatSession, arg: str, console: Console) -> None:
    from agent.core.session import find_session, list_sessions, read_transcript

    if not arg:
        chats = [s for s in list_sessions(session.repo) if s.kind == "chat" and s.id != session.id][:10]
        for s in chats:
            console.print(plain(f"{s.id}  {s.status or 'unfinished'}"), highlight=False)
        console.print(
            "/resume ID loads that conversation here" if chats else "no other chat sessions in this repository"
        )
        return
    session.load(read_transcript(find_session(arg)).messages)
    console.print(plain(f"loaded the conversation of {arg}"), highlight=False)


def _exit(session: ChatSession, arg: str, console: Console) -> object:
    return STOP


COMMANDS: dict[str, tuple[Callable[[ChatSession, str, Console], object], str]] = {
    "help": (_help, "this list"),
    "undo": (_undo, "take back the latest change (its checkpoint commit)"),
    "diff": (_diff, "everything this session changed"),
    "clear": (_clear, "start a new conversation (commits stay)"),
    "compact": (_compact, "replace the conversation so far by the model's summary of it"),
    "model": (_model, "what serves the model"),
    "profile": (_model, "same as /model"),
    "skills": (_skills, "the skills the agent can activate here"),
    "mcp": (_mcp, "the MCP tools of this session"),
    "cost": (_cost, "tokens, tok/s, KV cache reuse, drafted/accepted"),
    "resume": (_resume, "list earlier chats here; /resume ID loads one's conversation"),
    "exit": (_exit, "end the session (Ctrl-D too)"),
}
