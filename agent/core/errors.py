"""The agent layer's errors the user can fix (bad input, a repository in the wrong state). Every error raised on
purpose, in any layer, derives from `inference.errors.DflashError`: the CLI prints it as `error: ...` with no
traceback and routes by that one class."""

from __future__ import annotations

from inference.errors import DflashError


class UserError(DflashError):
    """A failure the user can act on; its message says what is wrong and how to fix it."""


def git_unusable(exc: BaseException) -> str | None:
    """GitPython runs `git version` when it is first imported: where git cannot run (a malformed `~/.gitconfig`
    makes every git command fail) that import fails with an ImportError whatever module imports it first. The
    one-line reason and fix for that failure; None for any other error."""
    cause = exc.__cause__
    if not isinstance(exc, ImportError) or cause is None or not type(cause).__module__.startswith("git."):
        return None
    said = str(getattr(cause, "stderr", "") or cause).replace("\n", " ")
    fatal = said[said.find("fatal:") :].strip(" '") if "fatal:" in said else said.strip()
    return (
        f"git cannot run here: {fatal}; fix your git configuration (the file git names, e.g. ~/.gitconfig) "
        "and try again"
    )
