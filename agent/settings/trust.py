"""Which projects' widening settings the user approved: by the project's resolved path, the exact values.

Like MCP server approvals: a project file that changes (the model rewrote it, a pull brought new values)
no longer matches its approval, and is asked about again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from inference.paths import config_dir


class TrustStore:
    def __init__(self, path: Path):
        self.path = path

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text()) if self.path.is_file() else {}
        except (OSError, json.JSONDecodeError):
            return {}  # unreadable: nothing approved (asked again), never more
        return data if isinstance(data, dict) else {}

    def approved(self, project: Path, values: dict[str, Any]) -> bool:
        return self._load().get(str(project.resolve())) == fingerprint(values)

    def approve(self, project: Path, values: dict[str, Any]) -> None:
        self._save({**self._load(), str(project.resolve()): fingerprint(values)})

    def revoke(self, project: Path) -> bool:
        data = self._load()
        found = data.pop(str(project.resolve()), None) is not None
        self._save(data)
        return found

    def _save(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def fingerprint(values: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()


def trust_store() -> TrustStore:
    """In the user config dir, which the sandbox hides from commands (tools/hidden.py HIDDEN_IN_HOME)."""
    return TrustStore(config_dir() / "project-trust.json")
