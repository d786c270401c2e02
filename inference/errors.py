"""The root of every error this program raises on purpose. Its message says what is wrong and what to do about
it, so the CLI prints it as one `error: ...` line with no traceback; any other exception is a bug and keeps its
traceback. It lives here, beside `inference.paths`, because every layer may import it (tests/test_imports.py)."""

from __future__ import annotations


class DflashError(Exception):
    """An error with a message meant for the user (or the model, for a tool's error)."""

    exit_code = 1
