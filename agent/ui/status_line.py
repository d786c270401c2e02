"""The one dim line a terminal shows while nothing streams yet (the model loading, a prompt being read, a tool
call being written): shared by `agent run`'s display and the chat's."""

from __future__ import annotations

from rich.console import Console
from rich.status import Status

from agent.ui.plain import plain


class StatusLine:
    """Mixed into a display that has a `console`: `waiting` shows or updates the line (on a terminal only),
    `quiet` takes it away before anything else is printed."""

    console: Console
    status: Status | None = None

    def waiting(self, what: str) -> None:
        if not self.console.is_terminal:
            return
        if self.status is None:
            self.status = self.console.status(plain(what, "dim"))
            self.status.start()
        else:
            self.status.update(plain(what, "dim"))

    def quiet(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def reading(tokens: int, cached: int) -> str:
    """What the line says while a prompt of `tokens` is read, `cached` of them from the KV cache."""
    return f"reading {tokens:,} tokens" + (f" ({cached:,} from cache)" if cached else "") + " ..."
