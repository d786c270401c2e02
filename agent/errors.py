"""The one error type the user sees as a message: anything that subclasses `UserError` is something the user
can fix (bad input, a repository in the wrong state), and the CLI prints it as `error: ...` with no traceback."""

from __future__ import annotations


class UserError(Exception):
    """A failure the user can act on; its message says what is wrong and how to fix it."""

    exit_code = 1
