"""`agent chat`: an interactive session in a repository. One Agent whose conversation grows turn by turn (and
the engine's KV cache with it), the same git checkpoints as `agent run` on a branch of its own, and what the
slash commands do (/undo, /diff, /clear, /compact, /cost ...). The terminal side is agent/commands/chat.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager, nullcontext
from pathlib import Path

from agent.checks.finish import FinishGate
from agent.core.errors import UserError
from agent.core.loop import Agent, AgentEvents, RunResult, RunStats
from agent.core.session import Transcript, new_transcript_path, read_transcript
from agent.core.texts import COMPACT_REQUEST, COMPACTED, UNDONE
from agent.core.toolcalls import ParsedCall
from agent.git import checkpoints
from agent.git import repo as gitrepo
from agent.git.checkpoints import CheckpointEvents, GitReport, GitRun
from agent.settings.config import Config
from agent.settings.mcp_setup import mcp_session
from agent.strategies.first_look import files_to_show
from agent.strategies.repetition import new_guard
from agent.ui.approval_prompt import TerminalApproval
from agent.ui.chat_display import ChatDisplay
from agent.workflows.runtime import backend_session, build_agent, check_backend
from inference.backends.backend import ChatBackend, Completion, Message, Sampling, Timings
from tools.approval import Approver
from tools.base import Tool, ToolResult

COMPACT_AT = 0.75  # share of the context a conversation may fill before it is compacted on its own


class ChatSession:
    """The state of one chat: the agent and its conversation, the git run, the totals for /cost. It is also the
    agent's events (between the checkpoints and the display), to count every step's tokens."""

    def __init__(
        self,
        repo: Path,
        config: Config,
        backend: ChatBackend,
        git_run: GitRun,
        transcript: Transcript,
        display: ChatDisplay,
        make_agent: Callable[[AgentEvents], Agent],
        mcp_tools: Sequence[Tool],
    ):
        """`make_agent(events)`: the session's agent, given the events it must report to (this session)."""
        self.repo, self.config, self.backend, self.git_run = repo, config, backend, git_run
        self.transcript, self.display, self.mcp_tools = transcript, display, mcp_tools
        self.totals, self.drafted, self.accepted = RunStats(), 0, 0
        self.pending: list[str] = []  # what the model must know with the next message (an /undo)
        self.titled = False
        self.git: GitReport | None = None  # set when the session ends
        self.last_prompt = 0  # the conversation's size in tokens after the latest model turn
        self.last: Timings | None = None  # the latest model turn's
        self.agent = make_agent(CheckpointEvents(git_run, self))

    @property
    def id(self) -> str:
        return self.transcript.path.stem

    def send(self, text: str) -> RunResult:
        """One reply to `text` (as many model turns and tool calls as it takes, until `finish`). Ctrl-C stops
        the reply, not the session: what it changed so far is committed, and the conversation goes on."""
        if not self.titled:  # what `agent sessions list` shows for this chat
            self.transcript.write("title", text=text.strip()[:200])
            self.titled = True
        message = "\n\n".join([*self.pending, text])
        self.pending = []
        self.display.waiting(f"reading {'the conversation' if self.agent.messages else 'the project'} ...")
        try:
            result = self.agent.continue_with(message)
        except KeyboardInterrupt:  # the terminal's SIGINT also ended git's long-lived helpers (cat-file): restart them
            self.git_run.repo.git.clear_cache()
            raise
        finally:
            self.display.quiet()
            self.git_run.commit_leftovers("changes left at the end of a reply")
        if self.nearly_full():
            self.display.on_note(
                f"the conversation fills {self.last_prompt / self.config.n_ctx:.0%} of the context; compacting it"
            )
            self.compact()
        return result

    def nearly_full(self) -> bool:
        return self.last_prompt > COMPACT_AT * self.config.n_ctx

    def compact(self) -> Timings:
        """Replace every turn after the system prompt with the model's own summary of them (the system prompt
        stays: the engine's cached prefix). Returns the summary request's timings: the prompt it read (the
        whole conversation, mostly from the KV cache) and the summary's tokens."""
        messages = self.agent.messages
        if len(messages) < 3:
            raise UserError("nothing to compact yet")
        completion = self.backend.complete(
            [*messages, Message(role="user", content=COMPACT_REQUEST)],
            None,
            Sampling(temperature=0.0, max_tokens=400, seed=self.config.seed),
        )
        summary = completion.text.strip()
        self.totals.add(completion.timings)  # what compacting cost is part of the session's cost
        messages[1:] = [Message(role="user", content=COMPACTED.format(summary=summary))]
        self.transcript.reset(messages)
        self.last_prompt = 0
        return completion.timings

    def load(self, messages: list[Message]) -> None:
        """Go on from a recorded conversation (a resumed session, or /resume)."""
        self.agent.messages[:] = messages
        self.transcript.reset(messages)
        self.pending, self.last_prompt = [], 0

    def clear(self) -> None:
        """Start a new conversation in the same session (git, branch and totals stay)."""
        self.agent.messages.clear()
        self.transcript.reset([])
        self.pending, self.last_prompt = [], 0

    def undo(self) -> checkpoints.UndoResult:
        """Take back the latest checkpoint (as `agent undo`), and tell the model with the next message."""
        done = checkpoints.undo(self.repo, self.git_run.branch)
        self.git_run.checkpoints = [c for c in self.git_run.checkpoints if c.commit != done.undone]
        self.pending.append(UNDONE.format(files=", ".join(done.files) or "the files"))
        return done

    def diff(self) -> str:
        """Everything this session changed: its commits and what is not committed yet."""
        return gitrepo.diff(self.git_run.repo, self.git_run.start_commit)

    def cost(self) -> str:
        t = self.totals
        drafted = f" · drafted {self.drafted}, accepted {self.accepted}" if self.drafted else ""
        return (
            f"{t.steps} model turn{'s' * (t.steps != 1)} · prompt {t.prompt_tokens} tokens ({t.cache_reuse:.0%} from the KV cache after "
            f"the first turn) · generated {t.completion_tokens} tokens at {t.tokens_per_second:.1f} tok/s · "
            f"prompt processing {t.prompt_seconds:.1f}s{drafted}"
        )

    # AgentEvents: count, then show
    def on_text(self, text: str) -> None:
        self.display.on_text(text)

    def on_prompt(self, tokens: int, cached: int) -> None:
        self.display.on_prompt(tokens, cached)

    def on_note(self, text: str) -> None:
        self.display.on_note(text)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        t = completion.timings
        self.totals.add(t)
        self.drafted += t.draft_n or 0
        self.accepted += t.draft_accepted or 0
        self.last, self.last_prompt = t, t.prompt_tokens + t.completion_tokens
        self.display.on_step(step, completion, results)


@contextmanager
def open_chat(
    repo: Path, config: Config, display: ChatDisplay, resume: Path | None = None, backend: ChatBackend | None = None
) -> Iterator[ChatSession]:
    """A chat in `repo` (or in the workspace of the session `resume` names, its conversation and branch): the
    backend and MCP servers open, the session's branch checked out, the transcript written. On the way out the
    work stays committed on that branch and the user's own uncommitted work is put back (as `agent run`)."""
    recorded = read_transcript(resume) if resume else None
    if recorded:
        if recorded.note:
            display.on_note(recorded.note)
        repo = Path(recorded.start["workspace"])
    repo = repo.expanduser().resolve()
    if backend is None:
        check_backend(config)
    branch = recorded.start.get("branch") if recorded else None
    kept = isinstance(branch, str) and branch in gitrepo.open_repo(repo).heads
    git_run = GitRun(repo, "chat", config, branch if kept else None)
    try:
        with closing(Transcript(new_transcript_path(f"chat-{repo.name}"))) as transcript:
            transcript.write(
                "start",
                workspace=str(repo),
                task="chat",
                workflow="chat",
                branch=git_run.branch,
                config=config.model_dump(exclude={"api_key"}),
                **({"resumed": str(resume)} if resume else {}),
            )
            if backend is None and not (config.endpoint or config.profile):
                display.on_note(f"loading {config.model} ...")
            opened = nullcontext(backend) if backend else backend_session(config)
            with opened as model, mcp_session(config, repo, display.on_note) as mcp_tools:
                session = ChatSession(
                    repo,
                    config,
                    model,
                    git_run,
                    transcript,
                    display,
                    lambda events: build_agent(
                        config,
                        model,
                        repo,
                        transcript=transcript,
                        events=events,
                        verify=FinishGate(repo, config),
                        extra_tools=mcp_tools,
                        first_look=files_to_show,
                        watch=new_guard,
                    ),
                    mcp_tools,
                )
                approver = session.agent.ctx.approver
                if config.approval == "ask" and isinstance(approver, Approver):
                    approver.ask = TerminalApproval(events=display, session_always=True)
                if recorded:
                    session.load(recorded.messages)
                yield session
    except BaseException as exc:
        git_run.abandon(failed=not isinstance(exc, (KeyboardInterrupt, SystemExit)))
        raise
    session.git = git_run.finish("chat session ended")
