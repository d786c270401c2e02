"""Secret values of the agent's environment never reach the model: every tool's output passes `redact_secrets`
(tools.base applies it once, to every result, built-in and MCP tools alike)."""

from __future__ import annotations

import os
import re

SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|COOKIE|_KEY$)",
    re.I,
)
MIN_SECRET_LENGTH = 8  # shorter values ("1", "true") would redact ordinary text


def redact_secrets(text: str, env: dict[str, str] | None = None) -> str:
    """Replace the values of secret-looking variables of the agent's environment wherever they show up
    (a command that prints a token it found in a file, a file or search hit that holds one)."""
    for name, value in (os.environ if env is None else env).items():
        if len(value) >= MIN_SECRET_LENGTH and SECRET_NAME.search(name) and value in text:
            text = text.replace(value, f"[redacted: value of ${name}]")
    return text
