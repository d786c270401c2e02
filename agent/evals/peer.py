"""Another agent in the task's folder, for a peer row on the same model and endpoint (`--mode command`).

The peer runs under the same sandbox as our agent's commands (network on, for the endpoint on 127.0.0.1), in
the same prepared folder, and is checked by the same hidden check. It is told the task and settings through
the environment: EVAL_TASK (the task's text), EVAL_ENDPOINT, EVAL_SEED, EVAL_TEMPERATURE, EVAL_MAX_STEPS. If its last output
line is a JSON object with `steps` (and `status`), those are recorded. See examples/eval/peer_mini_swe_agent.py."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from agent.checks import project
from agent.core.errors import UserError
from agent.core.loop import RunResult, RunStats
from agent.evals.tasks import EvalTask
from agent.git import repo as gitrepo
from agent.settings.config import Config
from agent.workflows.runs import WorkflowResult
from tools.shell import run_command

PEER_TIMEOUT = 1800.0


def anchored(command: str, base: Path) -> str:
    """The command with each word that names a file relative to `base` (where the user typed it) made absolute:
    it runs in each task's folder, where `examples/eval/peer.py` would name nothing."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command  # unbalanced quotes: the shell that runs it says so
    for word in dict.fromkeys(words):
        if word.startswith("-") or Path(word).is_absolute() or not (base / word).is_file():
            continue
        absolute = shlex.quote(str((base / word).resolve())).replace("\\", "\\\\")  # a replacement template
        command = re.sub(rf"(?<!\S){re.escape(word)}(?!\S)", absolute, command)
    return command


def run_peer(command: str, task: EvalTask, work: Path, config: Config) -> WorkflowResult:
    if not command.strip():
        raise UserError("--mode command needs --agent-command CMD (run in each task's folder; see docs/eval.md)")
    if not config.endpoint:
        raise UserError("--mode command needs --endpoint URL: the peer and our agent must use the same server")
    policy = project.command_policy(config.sandbox_policy(), work)
    env = {
        "EVAL_TASK": task.prompt,
        "EVAL_ENDPOINT": config.endpoint,
        "EVAL_SEED": str(config.seed),
        "EVAL_TEMPERATURE": str(config.temperature),
        "EVAL_MAX_STEPS": str(config.max_steps),
    }
    policy = policy.model_copy(update={"network": True, "env": {**policy.env, **env}})
    outcome = run_command(command, work, PEER_TIMEOUT, 20_000, policy)
    report = _last_json(outcome.output)
    if not report:  # it did not get to the end: say why, from its own last words
        tail = " | ".join(outcome.output.strip().splitlines()[-3:]) or "no output"
        raise UserError(f"the peer agent (exit {outcome.exit_code}) printed no result line: {tail[-300:]}")
    status = str(report.get("status") or ("finished" if outcome.exit_code == 0 else f"exit {outcome.exit_code}"))
    stats = RunStats(steps=int(report.get("steps") or 0))
    commit = gitrepo.commit_all(gitrepo.open_repo(work), "peer agent")
    return WorkflowResult(
        directory=str(work),
        run=RunResult(
            status="finished" if status == "finished" else "error", summary=status, stats=stats, wall_seconds=0.0
        ),
        files=[],
        tests=None,
        commit=commit,
        diff_stat="",
        transcript="",
    )


def _last_json(output: str) -> dict:
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}
