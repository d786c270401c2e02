"""The JSONL transcript of a run, written as it goes: a crash loses at most the step in flight."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import platformdirs

from inference.backend import Message


def runs_dir() -> Path:
    return Path(platformdirs.user_state_dir("dflash-agent")) / "runs"


def new_transcript_path(label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40] or "run"
    return runs_dir() / f"{stamp}-{safe}.jsonl"


class Transcript:
    """One JSON object per line: `start`, then `message` and `step` events, then `end`."""

    def __init__(self, path: Path):
        self.path = path
        self.error: str | None = None  # set when writing failed (disk full): the run goes on without it
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("a", encoding="utf-8")

    def write(self, kind: str, **data: Any) -> None:
        if self.error:
            return
        try:
            self._fh.write(json.dumps({"type": kind, "time": time.time(), **data}, default=str) + "\n")
            self._fh.flush()
        except OSError as exc:  # a full disk must not end the run and lose the work in the workspace
            self.error = f"transcript {self.path} stopped being written: {exc}"

    def message(self, message: Message) -> None:
        self.write("message", message=message.model_dump(exclude_defaults=True))

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError as exc:
            self.error = self.error or f"transcript {self.path} could not be closed: {exc}"


def load_messages(path: Path) -> list[Message]:
    """The conversation recorded in a transcript, to resume a run where it stopped."""
    messages = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "message":
            messages.append(Message.model_validate(event["message"]))
    return messages


def read_start(path: Path) -> dict[str, Any]:
    """The `start` event of a transcript: workspace, task, config (and the branch, for `run`)."""
    try:
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    except (OSError, IndexError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable transcript ({exc}); transcripts are in {runs_dir()}") from exc
    if first.get("type") != "start":
        raise ValueError(f"{path} does not begin with a start event: not a transcript of this agent")
    return first
