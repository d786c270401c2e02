"""The reference row: the same model answering in one reply, no tools, no loop. What the agent must beat."""

from __future__ import annotations

from pathlib import Path

from agent.core.errors import UserError
from agent.core.loop import RunResult, RunStats
from agent.evals.tasks import EvalTask
from agent.git import repo as gitrepo
from agent.settings.config import Config
from agent.strategies.one_shot import CODE_BLOCK
from agent.workflows.runs import WorkflowResult
from inference.backends.backend import ChatBackend, Message, Sampling

SYSTEM = "You are an expert programmer. Answer with the complete file in one fenced code block."


def single_reply(task: EvalTask, work: Path, config: Config, backend: ChatBackend) -> WorkflowResult:
    """Ask once with the task and its one starting file; the reply's longest code block becomes that file."""
    if len(task.start_files) != 1:
        raise UserError(f"{task.id}: single-reply mode needs a task with exactly one starting file")
    name, text = next(iter(task.start_files.items()))
    prompt = f"{task.prompt}\n\n{name}:\n```\n{text}```\n\nReply with the complete new {name}."
    sampling = Sampling(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed)
    completion = backend.complete(
        [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)], None, sampling
    )
    blocks = CODE_BLOCK.findall(completion.text)
    (work / name).write_text(max(blocks, key=len) if blocks else completion.text, encoding="utf-8")
    commit = gitrepo.commit_all(gitrepo.open_repo(work), "single reply")
    stats = RunStats()
    stats.add(completion.timings)
    run = RunResult(status="finished", summary="one reply", stats=stats, wall_seconds=0.0)
    return WorkflowResult(
        directory=str(work), run=run, files=[name], tests=None, commit=commit, diff_stat="", transcript=""
    )
