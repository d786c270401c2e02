"""Faults with real parts: llama-server killed mid-generation, Ctrl-C sent to a real `agent run`, then
resumed. Each must end with the transcript saved, git consistent, a message naming the cause and a way on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from agent.core.session import runs_dir
from agent.settings.config import Config
from agent.workflows.runs import run_task
from inference.profiles import BUILTIN_PROFILES
from inference.server import ManagedServer

AGENT = str(Path(sys.executable).parent / "agent")
ACTOR = git.Actor("t", "t@t")


def make_repo(path: Path) -> git.Repo:
    repo = git.Repo.init(path)
    (path / "notes.txt").write_text("original\n")
    repo.index.add(["notes.txt"])
    repo.index.commit("init", author=ACTOR, committer=ACTOR)
    return repo


def events_of(transcript: Path) -> list[dict]:
    return [json.loads(line) for line in transcript.read_text().splitlines()]


@pytest.mark.model
def test_engine_killed_mid_generation(engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    start = repo.head.commit.hexsha
    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], log_dir=tmp_path) as server:

        class KillAfterSomeTokens:
            chunks = 0

            def on_text(self, text):
                self.chunks += 1
                if self.chunks == 20:
                    server.process.send_signal(signal.SIGKILL)

            def on_step(self, *args):
                pass

            def on_note(self, text):
                pass

        result = run_task(
            Path(repo.working_dir),
            "Write a Python module stats.py with mean, median and mode functions, "
            "each with a docstring, and tests for each.",
            Config(endpoint=server.url, max_steps=3),
            KillAfterSomeTokens(),
        )
    assert result.run.status == "error"
    assert "lost the connection" in result.run.summary and "resume" in result.run.summary
    transcript = events_of(Path(result.transcript))
    assert transcript[-1]["type"] == "end" and transcript[-1]["result"]["status"] == "error"
    assert repo.heads[repo.heads[0].name].commit.hexsha == start or "master" not in repo.heads  # start branch untouched
    assert not repo.is_dirty(untracked_files=True)


@pytest.mark.model
def test_ctrl_c_on_a_real_agent_run_then_resume(tmp_path, qwen_path):
    name = f"sigint-{os.getpid()}-{int(time.time())}"  # transcripts are found by this name: keep it unique
    repo = make_repo(tmp_path / name)
    start_branch, start = repo.active_branch.name, repo.head.commit.hexsha
    (tmp_path / name / "notes.txt").write_text("my unsaved edit\n")  # the user's work in progress
    (tmp_path / name / "draft.md").write_text("an untracked draft\n")
    before = set(runs_dir().glob(f"*{name}*.jsonl")) if runs_dir().exists() else set()
    proc = subprocess.Popen(
        [
            AGENT,
            "run",
            "Create one.txt containing the word one. Then finish.",
            "--repo",
            str(tmp_path / name),
            "--max-steps",
            "8",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        # as from a terminal: a job started in the background (`cmd &`, as CI may run
        # us) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    transcript = None
    while time.monotonic() < deadline:  # the task is in the transcript: the model is now reading it (seconds)
        new = set(runs_dir().glob(f"*{name}*.jsonl")) - before
        if new:
            transcript = new.pop()
            if transcript.read_text().count('"type": "message"') >= 2:  # lines may still be half-written
                break
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted (Ctrl-C)" in stderr and f"agent run --resume {transcript}" in stderr.replace("\n", "")
    ends = [e for e in events_of(transcript) if e["type"] == "end"]
    assert ends and ends[-1]["result"]["status"] == "interrupted"

    repo = git.Repo(tmp_path / name)
    assert repo.active_branch.name == start_branch and repo.heads[start_branch].commit.hexsha == start
    assert (tmp_path / name / "notes.txt").read_text() == "my unsaved edit\n"  # nothing lost
    assert (tmp_path / name / "draft.md").read_text() == "an untracked draft\n"
    agent_branch = next(h for h in repo.heads if h.name.startswith("agent/"))  # kept for the resume

    resumed = subprocess.run(
        [AGENT, "run", "--resume", str(transcript), "--max-steps", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode in (0, 2), resumed.stderr
    result = json.loads(resumed.stdout)
    old = [e["message"] for e in events_of(transcript) if e["type"] == "message"]
    new = [e["message"] for e in events_of(Path(result["transcript"])) if e["type"] == "message"]
    assert new[:2] == old[:2] and len(new) > 2  # the same conversation, continued
    assert result["git"]["branch"] == agent_branch.name


@pytest.mark.model
def test_engine_that_stops_answering_is_named(engine, tmp_path):
    from inference.backends.backend import BackendError, Message, Sampling
    from inference.backends.endpoint import EndpointBackend

    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], log_dir=tmp_path) as server:
        backend = EndpointBackend(server.url, timeout=3)
        server.process.send_signal(signal.SIGSTOP)  # alive but silent: a hung engine
        try:
            started = time.monotonic()
            with pytest.raises(BackendError, match="sent nothing for 3 s: the engine is hung"):
                backend.complete([Message(role="user", content="Say hi.")], sampling=Sampling(max_tokens=8))
            assert time.monotonic() - started < 30
        finally:
            server.process.send_signal(signal.SIGCONT)
