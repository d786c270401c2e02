"""The JSONL transcript of a run, written as it goes: a crash loses at most the step in flight."""

from __future__ import annotations

import glob
import json
import secrets
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agent.core.errors import UserError
from inference.backends.backend import Message
from inference.paths import state_dir


def runs_dir() -> Path:
    return state_dir() / "runs"


def new_transcript_path(label: str) -> Path:
    """A fresh name: two runs started in the same second on same-named folders must not share a transcript."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40] or "run"
    return runs_dir() / f"{stamp}-{safe}-{secrets.token_hex(3)}.jsonl"


class Transcript:
    """One JSON object per line: `start`, then `message` and `step` events (and `reset` when a chat compacts
    or clears its conversation), then `end` (a chat writes one per reply)."""

    def __init__(self, path: Path):
        self.path = path
        self.error: str | None = None  # set when writing failed (disk full): the run goes on without it
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("x", encoding="utf-8")  # never another run's file
        except OSError as exc:
            raise UserError(
                f"cannot write the run's transcript {path} ({exc.strerror}); make {path.parent} "
                "writable, or point XDG_STATE_HOME at a folder that is"
            ) from None

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

    def reset(self, messages: list[Message]) -> None:
        """The conversation was replaced (a chat's /compact or /clear): resuming starts from `messages`."""
        self.write("reset", messages=[m.model_dump(exclude_defaults=True) for m in messages])

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError as exc:
            self.error = self.error or f"transcript {self.path} could not be closed: {exc}"


class Recorded(BaseModel):
    """What a transcript holds for resuming: its start event and the conversation."""

    start: dict[str, Any]
    messages: list[Message]
    note: str | None = None  # what was skipped (a last line cut off by a crash)


def read_transcript(path: Path) -> Recorded:
    """The start event and conversation recorded in a transcript, to resume a run where it stopped. A last
    line cut off by a crash is skipped with a note; damage anywhere else is an error."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the transcript {path} ({exc}); transcripts are in {runs_dir()}") from exc
    events, note = [], None
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and number > 1:
                note = f"the last line of {path} was cut off (the run stopped while writing it); resuming without it"
                break
            raise UserError(f"line {number} of {path} is not JSON ({exc}); the transcript is damaged") from None
        events.append(event)
    first = events[0] if events else {}
    if (
        not isinstance(first, dict)
        or first.get("type") != "start"
        or not isinstance(first.get("workspace"), str)
        or not isinstance(first.get("task"), str)
    ):
        raise UserError(
            f"{path} does not begin with a start event naming the workspace and task: not a transcript "
            f"of this agent (transcripts are in {runs_dir()})"
        )
    messages: list[Message] = []
    try:
        for e in events:
            if (
                isinstance(e, dict) and e.get("type") == "restart"
            ):  # a fresh attempt: its conversation is the one to resume
                messages = []
            elif isinstance(e, dict) and e.get("type") == "message":
                messages.append(Message.model_validate(e["message"]))
            elif isinstance(e, dict) and e.get("type") == "reset":  # /compact or /clear in a chat
                messages = [Message.model_validate(m) for m in e["messages"]]
    except (KeyError, TypeError, ValidationError) as exc:
        raise UserError(
            f"{path} holds a message this agent cannot read ({str(exc).splitlines()[0]}); the transcript is damaged"
        ) from None
    return Recorded(start=first, messages=messages, note=note)


class SessionInfo(BaseModel):
    """One session as `agent sessions list` shows it; `id` is the transcript's file name without `.jsonl`."""

    id: str
    path: Path
    started: float
    kind: str  # run, new-project or chat
    workspace: str
    task: str
    status: str | None = None  # the last `end` event's status; None while running or after a crash


def list_sessions(workspace: Path | None = None) -> list[SessionInfo]:
    """Every readable session, newest first; with `workspace`, only those that worked there."""
    found = [info for path in runs_dir().glob("*.jsonl") if (info := _session_info(path))]
    if workspace is not None:
        found = [s for s in found if s.workspace == str(workspace.resolve())]
    return sorted(found, key=lambda s: (s.started, s.id), reverse=True)


def _session_info(path: Path, tail_bytes: int = 65536) -> SessionInfo | None:
    try:
        with path.open("rb") as fh:
            first = json.loads(fh.readline())
            head = [fh.readline().decode("utf-8", "replace") for _ in range(3)]  # a chat's `title` comes early
            fh.seek(max(0, path.stat().st_size - tail_bytes))
            tail = fh.read().decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict) or first.get("type") != "start":
        return None
    status, task = None, str(first.get("task", ""))
    for line in head:
        event = _event(line)
        if event.get("type") == "title" and isinstance(event.get("text"), str):
            task = event["text"]
    for line in tail:
        event = _event(line)
        if event.get("type") == "end" and isinstance(event.get("result"), dict):
            found = event["result"].get("status")
            status = found if isinstance(found, str) else None
    return SessionInfo(
        id=path.stem,
        path=path,
        started=_seconds(first.get("time")),
        kind=str(first.get("workflow", "run")),
        workspace=str(first.get("workspace", "")),
        task=task,
        status=status,
    )


def _seconds(value: Any) -> float:
    """A transcript's start time; anything that is not a plausible time (text, `nan`, a year past 9999) is 0."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if 0 <= seconds < 253402300800 else 0.0


def _event(line: bytes | str) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def find_session(ref: str) -> Path:
    """The transcript a user names: a path (kept as given: reading it says what is wrong), a session id, or an
    id's unique beginning."""
    if "/" in ref or ref.endswith(".jsonl") or Path(ref).expanduser().is_file():
        return Path(ref).expanduser()
    exact = runs_dir() / f"{ref}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(runs_dir().glob(f"{glob.escape(ref)}*.jsonl")) if ref else []
    if len(matches) == 1:
        return matches[0]
    what = "matches several sessions" if matches else "is neither a transcript file nor a session id"
    raise UserError(f"{ref!r} {what}; `agent sessions list` shows the ids")
