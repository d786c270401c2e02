"""The one interface every small-model strategy has, and the chain that runs them before the loop.

A strategy says whether it applies to this run (`applies`) and what it does before or around the rest of the
chain (`run`, given `then`: the strategies after it, ending in the loop). It may change the run it passes on
(fewer steps, a note in the task, what every agent is equipped with: `Equipment`), answer without the loop,
or call the rest more than once. The loop itself (agent/core/loop.py) takes only the equipment's plain hooks."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from agent.core.loop import Agent, RunResult, RunStats
from agent.core.session import Transcript
from agent.settings.config import Config
from inference.backends.backend import ChatBackend, Message


class Gate(Protocol):
    """What strategies use of the finish check (agent/checks/finish.py `FinishGate`), named here because checks.py
    imports strategy modules (for the stubs' examples) that import this one. `given` and `stub_files` hold
    examples.ModuleExamples and given_code.GivenFile, which import this module too."""

    no_tests: str | None
    given: list[Any]
    stub_files: dict[str, Any]

    def new_attempt(self) -> None: ...

    def verdict(self, budget: bool = False) -> str | None: ...


# {path: contents} to show in the first message, from the workspace, its files and the task
FirstLook = Callable[[Path, list[str], str], dict[str, str]]
# a fresh watcher for one streamed reply: fed each piece, True cuts the reply there
ReplyWatch = Callable[[], Callable[[str], bool]]


@dataclass
class Equipment:
    """What strategies give every agent of the run (and their own requests to the model)."""

    first_look: FirstLook | None = None
    watch: ReplyWatch | None = None
    answer_fixes: list[Callable[[str], str]] = field(default_factory=list)  # applied to a whole-file answer


@dataclass
class Run:
    """One run as the chain passes it on: the task, the settings, and the means to build an agent for it."""

    workspace: Path
    task: str
    config: Config
    backend: ChatBackend
    transcript: Transcript
    build: Callable[[Config, Equipment], Agent]  # an agent with these settings and this equipment
    gate: Gate | None = None  # the finish check, when the workflow's finish is the project's own check
    verify: Callable[[], str | None] | None = None  # what `finish` must pass (the gate, or a workflow's command)
    history: list[Message] | None = None  # a resumed conversation
    restore: Callable[[], None] | None = None  # puts the workspace back as the task found it, where one can
    note: Callable[[str], None] = lambda text: None
    equipment: Equipment = field(default_factory=Equipment)

    def agent(self, **settings: object) -> Agent:
        """An agent for this run, with `settings` (max_steps, seed ...) over the run's config."""
        return self.build(self.config.model_copy(update=settings), self.equipment)

    def but(self, **changes: object) -> Run:
        """This run with some fields changed (the equipment is copied: a strategy's additions stay its own)."""
        copied = replace(self.equipment, answer_fixes=list(self.equipment.answer_fixes))
        return replace(self, **{"equipment": copied, **changes})  # type: ignore[arg-type]


Then = Callable[[Run], RunResult]


class Strategy(ABC):
    """A small-model strategy: when it applies to a run, and what it does before or around the rest."""

    name: str = ""

    @abstractmethod
    def applies(self, run: Run) -> bool: ...

    @abstractmethod
    def run(self, run: Run, then: Then) -> RunResult: ...


def run_chain(strategies: Sequence[Strategy], run: Run, loop: Then) -> RunResult:
    """Each strategy that applies (asked when the chain reaches it: an earlier one may change the run), then
    `loop`; the transcript names each that applied (a `strategy` event)."""
    if not strategies:
        return loop(run)
    first, rest = strategies[0], strategies[1:]

    def then(changed: Run) -> RunResult:
        return run_chain(rest, changed, loop)

    if not first.applies(run):
        return then(run)
    run.transcript.write("strategy", name=first.name)
    return first.run(run, then)


def the_loop(run: Run) -> RunResult:
    """The end of every chain: the agent loop, on the run as the strategies left it."""
    return run.agent().run(run.task, run.history)


def named(task: str, path: str, functions: Sequence[str] = ()) -> bool:
    """Whether `task` names the file `path` (as written or by its file name) or one of `functions` as a word:
    a strategy that works on a stub applies only to the stubs a task is about."""
    if path in task or Path(path).name in task:
        return True
    words = set(re.findall(r"\w+", task))
    return any(name in words for name in functions)


def add_stats(total: RunStats, part: RunStats) -> None:
    """Add `part` to `total`; a part after one with steps counts as later turns (its prompts reuse the cache)."""
    first = total.steps == 0
    for name in RunStats.model_fields:
        setattr(total, name, getattr(total, name) + getattr(part, name))
    if not first:  # every prompt of a later attempt is a later turn of the run
        total.later_prompt_tokens += part.prompt_tokens - part.later_prompt_tokens
        total.later_cached_tokens += part.cached_prompt_tokens - part.later_cached_tokens
