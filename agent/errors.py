"""The errors the user sees as a message: something the user can fix (bad input, a repository in the wrong
state). The CLI prints each as `error: ...` with no traceback. `agent/` raises `UserError`; `inference/` and
`tools/` cannot import `agent/`, so their own such errors are listed in `user_errors()`."""

from __future__ import annotations


class UserError(Exception):
    """A failure the user can act on; its message says what is wrong and how to fix it."""

    exit_code = 1


def user_errors() -> tuple[type[Exception], ...]:
    """`UserError` and the lower layers' errors about input the user can fix; a new one is added here."""
    from inference.backend import BackendError
    from inference.engine import EngineBuildError
    from inference.fetch import FetchError
    from inference.profiles import ProfileError
    from inference.rpc import RpcWorkerError
    from inference.server import ServerError
    from tools.mcp_config import MCPConfigError

    return (
        UserError,
        BackendError,
        EngineBuildError,
        FetchError,
        ProfileError,
        RpcWorkerError,
        ServerError,
        MCPConfigError,
    )
