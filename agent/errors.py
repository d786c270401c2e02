"""The agent layer's errors the user can fix (bad input, a repository in the wrong state). Every error raised on
purpose, in any layer, derives from `inference.errors.DflashError`: the CLI prints it as `error: ...` with no
traceback and routes by that one class."""

from __future__ import annotations

from inference.errors import DflashError


class UserError(DflashError):
    """A failure the user can act on; its message says what is wrong and how to fix it."""
